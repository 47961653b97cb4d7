package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// updateGolden rewrites testdata/render/*.golden with -update. It reuses an
// -update flag another test file of this package may already define.
var updateGolden = func() *bool {
	if f := flag.Lookup("update"); f != nil {
		if getter, ok := f.Value.(flag.Getter); ok {
			if b, ok := getter.Get().(bool); ok {
				v := b
				return &v
			}
		}
	}
	return flag.Bool("update", false, "rewrite golden files")
}()

func TestRenderGolden(t *testing.T) {
	dir := filepath.Join("testdata", "render")
	tests := []struct {
		name  string
		args  []string
		stdin string // file name in dir, or ""
		code  int
	}{
		{"values-from-file", []string{"--input", filepath.Join(dir, "current.json")}, "", exitOK},
		{"values-from-stdin", []string{}, "current.json", exitOK},
		{"diff-upgrade-preview", []string{"--input", filepath.Join(dir, "current.json"), "--diff", filepath.Join(dir, "upgraded.json")}, "", exitOK},
		{"diff-same-input", []string{"--input", filepath.Join(dir, "current.json"), "--diff", "-"}, "current.json", exitOK},
		{"config-file", []string{"--input", filepath.Join(dir, "current.json"), "--config", filepath.Join(dir, "config.yaml")}, "", exitOK},
		{"strict-labels-flag", []string{"--input", filepath.Join(dir, "strict.json"), "--strict-labels"}, "", exitInvalid},
		{"unknown-label-warns", []string{"--input", filepath.Join(dir, "strict.json")}, "", exitOK},
		{"invalid-input", []string{"--input", filepath.Join(dir, "invalid.json")}, "", exitInvalid},
		{"invalid-diff-target", []string{"--input", filepath.Join(dir, "current.json"), "--diff", filepath.Join(dir, "invalid.json")}, "", exitInvalid},
		{"truncated-json", []string{}, "truncated.json", exitInvalid},
		{"missing-file", []string{"--input", filepath.Join(dir, "absent.json")}, "", exitIO},
		{"both-from-stdin", []string{"--diff", "-"}, "current.json", exitInvalid},
		{"unknown-flag", []string{"--inptu", "x.json"}, "", exitInvalid},
		// --deployed: what a mutation would change in a deployed release
		// (here one the StackHPC driver installed), as RenderValues says.
		{"deployed-stackhpc-resize", []string{"--input", filepath.Join(dir, "stackhpc-resized.json"), "--deployed", filepath.Join(dir, "stackhpc-deployed.txt")}, "", exitOK},
		{"deployed-stackhpc-upgrade", []string{"--input", filepath.Join(dir, "stackhpc-upgraded.json"), "--deployed", filepath.Join(dir, "stackhpc-deployed.txt")}, "", exitOK},
		{"deployed-other-chart", []string{"--input", filepath.Join(dir, "stackhpc-resized.json"), "--deployed", filepath.Join(dir, "stackhpc-deployed.txt"), "--deployed-chart", "openstack-cluster-0.23.0"}, "", exitOK},
		{"deployed-from-stdin", []string{"--input", filepath.Join(dir, "stackhpc-resized.json"), "--deployed", "-"}, "stackhpc-deployed.txt", exitOK},
		{"deployed-not-values", []string{"--input", filepath.Join(dir, "stackhpc-resized.json"), "--deployed", filepath.Join(dir, "not-values.yaml")}, "", exitInvalid},
		{"deployed-missing", []string{"--input", filepath.Join(dir, "stackhpc-resized.json"), "--deployed", filepath.Join(dir, "absent.yaml")}, "", exitIO},
		{"deployed-and-diff", []string{"--input", filepath.Join(dir, "current.json"), "--diff", filepath.Join(dir, "upgraded.json"), "--deployed", filepath.Join(dir, "stackhpc-deployed.txt")}, "", exitInvalid},
		{"deployed-chart-alone", []string{"--input", filepath.Join(dir, "current.json"), "--deployed-chart", "0.27.0"}, "", exitInvalid},
		{"deployed-both-from-stdin", []string{"--deployed", "-"}, "current.json", exitInvalid},
		{"stray-argument", []string{"current.json"}, "", exitInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin bytes.Buffer
			if tt.stdin != "" {
				data, err := os.ReadFile(filepath.Join(dir, tt.stdin))
				if err != nil {
					t.Fatal(err)
				}
				stdin.Write(data)
			}
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), append([]string{"render"}, tt.args...), &stdin, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout.String(), stderr.String())
			}
			if code != exitOK {
				lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
				if last := lines[len(lines)-1]; !strings.HasPrefix(last, "error: ") {
					t.Errorf("stdout's last line %q is not the error", last)
				}
			}
			got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout.String(), stderr.String())
			golden := filepath.Join(dir, tt.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/magnum-capi -run TestRenderGolden -update writes it)", err)
			}
			if string(want) != got {
				t.Errorf("%s is stale (-update rewrites it); got:\n%s", golden, got)
			}
		})
	}
}

// TestRenderOutputIsValuesYAML checks that stdout is exactly the values
// document, so it can be piped into helm.
func TestRenderOutputIsValuesYAML(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"render", "--input", filepath.Join("testdata", "render", "current.json")}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stdout.String())
	}
	var values map[string]any
	if err := yaml.UnmarshalStrict(stdout.Bytes(), &values); err != nil {
		t.Fatal(err)
	}
	if values["cloudCredentialsSecretName"] != "demo-abcdefghijkl-cloud-credentials" || values["nodeGroups"] == nil {
		t.Errorf("unexpected values: %v", values)
	}
	first := stdout.String()
	stdout.Reset()
	dispatch(context.Background(), []string{"render", "--input", filepath.Join("testdata", "render", "current.json")}, nil, &stdout, &stderr)
	if stdout.String() != first {
		t.Error("two renders of the same input differ")
	}
}

func TestRenderIsRegistered(t *testing.T) {
	if _, ok := lookup("render"); !ok {
		t.Fatal("render is not a command")
	}
	var usage bytes.Buffer
	dispatch(context.Background(), nil, nil, &usage, &usage)
	if !strings.Contains(usage.String(), "render") {
		t.Errorf("usage does not list render:\n%s", usage.String())
	}
}
