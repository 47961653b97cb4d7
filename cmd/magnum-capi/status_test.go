package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// updateStatusGolden rewrites testdata/status/*/want.* with -update. It reuses
// an -update flag another test file of this package may already define.
var updateStatusGolden = func() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool("update", false, "rewrite golden files")
	return func() bool { return *b }
}()

// TestStatusGolden runs `magnum-capi status` on every testdata/status/<case>:
// objects/ is --from-dir, args holds the other flags (one per line; {case} is
// the case directory). A case that succeeds must print want.json; one that
// fails must exit 2 with want.err on stderr.
func TestStatusGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/status/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "args"))
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"status", "--from-dir", filepath.Join(dir, "objects")}
			for _, a := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				args = append(args, strings.ReplaceAll(a, "{case}", dir))
			}
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), args, nil, &stdout, &stderr)
			got, golden, stale := stdout.Bytes(), filepath.Join(dir, "want.json"), filepath.Join(dir, "want.err")
			if code != 0 {
				if code != 2 {
					t.Fatalf("exit code %d, want 0 or 2; stderr:\n%s", code, stderr.String())
				}
				got, golden, stale = stderr.Bytes(), stale, golden
			} else if stderr.Len() > 0 {
				t.Errorf("stderr on success: %s", stderr.String())
			}
			if updateStatusGolden() {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(stale)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (exit code %d; go test ./cmd/magnum-capi -run TestStatusGolden -update writes it)\n%s%s", err, code, stdout.String(), stderr.String())
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale (-update rewrites it); got:\n%s", golden, got)
			}
		})
	}
}

// runStatusArgs runs the command and returns its exit code, stdout and stderr.
func runStatusArgs(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), append([]string{"status"}, args...), nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// stDir creates a directory of files for one test.
func stDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	stClusterYAML           = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: %s, namespace: magnum-p}\n"
	stMachineDeploymentYAML = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachineDeployment\nmetadata: {name: c1-aaaaaaaaaaaa-md-0, namespace: magnum-p, labels: {capi.stackhpc.com/node-group: md-0}}\nspec: {clusterName: c1-aaaaaaaaaaaa, replicas: 2}\n"
)

func stCluster(name string) string { return strings.Replace(stClusterYAML, "%s", name, 1) }

// TestStatusInputErrors: bad flags and objects exit 2 naming the problem.
func TestStatusInputErrors(t *testing.T) {
	one := stDir(t, map[string]string{"c.yaml": stCluster("c1-aaaaaaaaaaaa")})
	two := stDir(t, map[string]string{"a.yaml": stCluster("c1-aaaaaaaaaaaa"), "b/c.yml": stCluster("c2-bbbbbbbbbbbb")})
	none := stDir(t, map[string]string{"s.json": `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}`})
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no status", []string{"--from-dir", one}, `--magnum-status: "", expected one of CREATE_IN_PROGRESS`},
		{"unknown status", []string{"--from-dir", one, "--magnum-status", "CREATING"}, `--magnum-status: "CREATING"`},
		{"no dir", []string{"--magnum-status", "CREATE_IN_PROGRESS"}, "--from-dir is required"},
		{"missing dir", []string{"--from-dir", filepath.Join(one, "nope"), "--magnum-status", "CREATE_IN_PROGRESS"}, "--from-dir: stat"},
		{"file as dir", []string{"--from-dir", filepath.Join(one, "c.yaml"), "--magnum-status", "CREATE_IN_PROGRESS"}, "is not a directory"},
		{"bad time", []string{"--from-dir", one, "--magnum-status", "CREATE_IN_PROGRESS", "--created-at", "yesterday"}, `--created-at: "yesterday", expected an RFC 3339 time`},
		{"bad now", []string{"--from-dir", one, "--magnum-status", "CREATE_IN_PROGRESS", "--now", "1700000000"}, `--now: "1700000000"`},
		{"negative timeout", []string{"--from-dir", one, "--magnum-status", "CREATE_IN_PROGRESS", "--timeout-minutes", "-5"}, "--timeout-minutes: -5, expected 0 or more"},
		{"bad release flag", []string{"--from-dir", one, "--magnum-status", "CREATE_IN_PROGRESS", "--release-installed", "maybe"}, `--release-installed: "maybe", expected true, false or auto`},
		{"two clusters", []string{"--from-dir", two, "--magnum-status", "CREATE_IN_PROGRESS"}, "2 Clusters among the objects (c1-aaaaaaaaaaaa, c2-bbbbbbbbbbbb); give --stack-id"},
		{"no cluster", []string{"--from-dir", none, "--magnum-status", "DELETE_IN_PROGRESS"}, "no Cluster (cluster.x-k8s.io) among the objects; give --stack-id"},
		{"extra argument", []string{"--from-dir", one, "--magnum-status", "CREATE_IN_PROGRESS", "what"}, `unexpected argument "what"`},
		{"both sources", []string{"--from-dir", one, "--cluster", "c1", "--namespace", "n", "--magnum-status", "CREATE_IN_PROGRESS"}, "--from-dir and --cluster are exclusive"},
		{"live half given", []string{"--cluster", "c1", "--magnum-status", "CREATE_IN_PROGRESS"}, "live mode needs both --cluster and --namespace"},
		{"undecodable YAML", []string{"--from-dir", stDir(t, map[string]string{"x.yaml": "kind: [unclosed"}), "--magnum-status", "CREATE_IN_PROGRESS"}, "x.yaml: document 1:"},
		{"no kind in a List item", []string{"--from-dir", stDir(t, map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}\n"}), "--magnum-status", "CREATE_IN_PROGRESS"}, "l.yaml: document 1:"},
		{"object not a map", []string{"--from-dir", stDir(t, map[string]string{"s.yaml": "- a\n- b\n"}), "--magnum-status", "CREATE_IN_PROGRESS"}, "s.yaml: document 1: not an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runStatusArgs(c.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and stderr containing %q", code, stdout, stderr, c.want)
			}
		})
	}
}

// TestStatusNodeGroupsFlag: --nodegroups takes `openstack coe nodegroup list
// -f json` output, fills chart names with the chart's rule, and rejects
// entries it cannot use.
func TestStatusNodeGroupsFlag(t *testing.T) {
	objs := stDir(t, map[string]string{"c.yaml": stCluster("c1-aaaaaaaaaaaa") + "---\n" + stMachineDeploymentYAML})
	for _, c := range []struct {
		name, json string
		code       int
		want       string // in stdout (code 0) or stderr
	}{
		{"openstack client output", `[{"uuid": "u1", "name": "MD 0", "flavor_id": "m1", "image_id": "i", "node_count": 2, "role": "worker", "status": "CREATE_COMPLETE"}]`, 0, `"name": "MD 0"`},
		{"not a list", `{"name": "x"}`, 2, "expected a JSON list of node groups"},
		{"no name", `[{"status": "CREATE_COMPLETE"}]`, 2, "[0].name: empty"},
		{"bad status", `[{"name": "x", "status": "RUNNING"}]`, 2, `[0].status: "RUNNING"`},
		{"negative count", `[{"name": "x", "status": "CREATE_COMPLETE", "node_count": -1}]`, 2, "[0].node_count: -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "ng.json")
			if err := os.WriteFile(file, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runStatusArgs("--from-dir", objs, "--magnum-status", "CREATE_COMPLETE", "--nodegroups", file)
			if code != c.code || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("exit %d\nstdout %s\nstderr %s\nwant exit %d with %q", code, stdout, stderr, c.code, c.want)
			}
		})
	}
	// The chart names "MD 0" "md-0": its MachineDeployment c1-...-md-0 is found,
	// so node_count comes from it.
	file := filepath.Join(t.TempDir(), "ng.json")
	os.WriteFile(file, []byte(`[{"name": "MD 0", "node_count": 7, "role": "worker", "status": "CREATE_COMPLETE"}]`), 0o644)
	_, stdout, _ := runStatusArgs("--from-dir", objs, "--magnum-status", "CREATE_COMPLETE", "--nodegroups", file)
	var out statusOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.NodeGroups) != 1 || out.NodeGroups[0].NodeCount != 2 {
		t.Errorf("node group MD 0 not matched to its MachineDeployment: %v %s", err, stdout)
	}
}

// TestReleaseInstalled: --release-installed auto reads Helm's release Secrets
// when given, else the Cluster.
func TestReleaseInstalled(t *testing.T) {
	secret := func(release, status string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: sh.helm.release.v1.x, labels: {owner: helm, name: " + release + ", status: " + status + "}}\n"
	}
	deleting := "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: c1-aaaaaaaaaaaa, deletionTimestamp: \"2026-07-01T12:00:00Z\", finalizers: [cluster.cluster.x-k8s.io]}\n"
	for _, c := range []struct {
		name, flag string
		docs       []string
		want       bool
	}{
		{"deployed revision", "auto", []string{stCluster("c1-aaaaaaaaaaaa"), secret("c1-aaaaaaaaaaaa", "superseded"), secret("c1-aaaaaaaaaaaa", "deployed")}, true},
		{"only uninstalled revisions", "auto", []string{stCluster("c1-aaaaaaaaaaaa"), secret("c1-aaaaaaaaaaaa", "uninstalled")}, false},
		{"other releases only", "auto", []string{stCluster("c1-aaaaaaaaaaaa"), secret("c2-bbbbbbbbbbbb", "deployed")}, false},
		{"no Helm Secrets, Cluster live", "auto", []string{stCluster("c1-aaaaaaaaaaaa")}, true},
		{"no Helm Secrets, Cluster deleting", "auto", []string{deleting}, false},
		{"no Helm Secrets, no Cluster", "auto", nil, false},
		{"forced true", "true", nil, true},
		{"forced false", "false", []string{secret("c1-aaaaaaaaaaaa", "deployed")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for _, d := range c.docs {
				got, err := decodeDocument([]byte(d))
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, got...)
			}
			snap, err := capistatus.SnapshotFromObjects("c1-aaaaaaaaaaaa", objs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := releaseInstalled(c.flag, "c1-aaaaaaaaaaaa", objs, snap)
			if err != nil || got != c.want {
				t.Errorf("releaseInstalled = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// TestStatusLiveHook: once the Kubernetes adapter sets liveReader, --cluster
// answers from its objects like --from-dir, and its read failures exit 1.
func TestStatusLiveHook(t *testing.T) {
	defer func(old func(context.Context, string, string) ([]*unstructured.Unstructured, error)) {
		liveReader = old
	}(liveReader)
	var asked [2]string
	liveReader = func(_ context.Context, namespace, name string) ([]*unstructured.Unstructured, error) {
		asked = [2]string{namespace, name}
		if name == "broken" {
			return nil, errors.New("connection refused")
		}
		return decodeDocument([]byte(stCluster(name)))
	}
	code, stdout, stderr := runStatusArgs("--cluster", "c1-aaaaaaaaaaaa", "--namespace", "magnum-p", "--magnum-status", "DELETE_IN_PROGRESS")
	if code != 0 || asked != [2]string{"magnum-p", "c1-aaaaaaaaaaaa"} || !strings.Contains(stdout, `"status": "DELETE_IN_PROGRESS"`) {
		t.Errorf("exit %d, asked %v, stdout %s, stderr %s", code, asked, stdout, stderr)
	}
	code, _, stderr = runStatusArgs("--cluster", "broken", "--namespace", "magnum-p", "--magnum-status", "CREATE_IN_PROGRESS")
	if code != 1 || !strings.Contains(stderr, "reading cluster broken in namespace magnum-p: connection refused") {
		t.Errorf("exit %d, stderr %s; want exit 1 naming the read failure", code, stderr)
	}
}
