package capistatus

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var updateRecorded = flag.Bool("update", false, "rewrite testdata/capi-v1.13/*/want.json")

// recordedDir holds snapshots recorded from the real Cluster API v1.13
// controllers of the test bed (see its PROVENANCE.md).
const recordedDir = "testdata/capi-v1.13"

// recordedAnswer is want.json: what Derive and DeriveHealth make of it.
type recordedAnswer struct {
	Result Result `json:"result"`
	Health Health `json:"health"`
}

// TestRecordedSnapshots replays every recorded snapshot through
// SnapshotFromObjects, Derive and DeriveHealth and compares the answer with
// want.json (-update rewrites it). The recording test asserted the answer
// the sidecar gave while the real controllers ran; this keeps capistatus
// giving it without them.
func TestRecordedSnapshots(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(recordedDir, "*", "request.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded snapshots in %s: %v", recordedDir, err)
	}
	for _, reqPath := range dirs {
		dir := filepath.Dir(reqPath)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			req, objs := readRecorded(t, dir)
			snap, err := SnapshotFromObjects(req.StackID, objs)
			if err != nil {
				t.Fatalf("SnapshotFromObjects: %v", err)
			}
			cfg, err := req.Config()
			if err != nil {
				t.Fatal(err)
			}
			r := req.Request()
			got, err := json.MarshalIndent(recordedAnswer{Result: Derive(r, snap, cfg), Health: DeriveHealth(r, snap)}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join(dir, "want.json")
			if *updateRecorded {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./capistatus -run TestRecordedSnapshots -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (-update rewrites it); got:\n%s", golden, got)
			}
		})
	}
}

// readRecorded reads request.json and objects.yaml of one recording.
func readRecorded(t *testing.T, dir string) (Recording, []*unstructured.Unstructured) {
	t.Helper()
	var req Recording
	raw, err := os.ReadFile(filepath.Join(dir, "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("request.json: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("objects.yaml: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return req, objs
}

// realControllersSection is the heading of docs/status.md's table of the
// recorded checkpoints and the rows each verifies.
const realControllersSection = "## Verified against the real Cluster API controllers"

// TestRecordedRowsDocumented keeps that table and the recordings in step:
// one table row per recorded snapshot, naming exactly the rows its
// request.json does, each a row of docs/status.md.
func TestRecordedRowsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n"+realControllersSection+"\n")
	if start < 0 {
		t.Fatalf("docs/status.md has no section %q", realControllersSection)
	}
	section := text[start+1:]
	if end := strings.Index(section[len(realControllersSection):], "\n## "); end >= 0 {
		section = section[:len(realControllersSection)+end]
	}
	documented := map[string][]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|.*\\| ([A-Z]-\\d\\d(?:, [A-Z]-\\d\\d)*) \\|$").FindAllStringSubmatch(section, -1) {
		documented[m[1]] = strings.Split(m[2], ", ")
	}
	rowIDs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z]-\d\d) \|`).FindAllStringSubmatch(text, -1) {
		rowIDs[m[1]] = true
	}
	dirs, err := filepath.Glob(filepath.Join(recordedDir, "*", "request.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded snapshots in %s: %v", recordedDir, err)
	}
	for _, reqPath := range dirs {
		name := filepath.Base(filepath.Dir(reqPath))
		req, _ := readRecorded(t, filepath.Dir(reqPath))
		got, ok := documented[name]
		delete(documented, name)
		if !ok {
			t.Errorf("docs/status.md %q: no row for the recording `%s`", realControllersSection, name)
			continue
		}
		if strings.Join(got, ", ") != strings.Join(req.Rows, ", ") {
			t.Errorf("docs/status.md: `%s` verifies %v, its request.json says %v", name, got, req.Rows)
		}
		for _, id := range req.Rows {
			if !rowIDs[id] {
				t.Errorf("%s/request.json names row %s, which docs/status.md does not have", name, id)
			}
		}
	}
	for name := range documented {
		t.Errorf("docs/status.md names a recording `%s` that %s does not have", name, recordedDir)
	}
}
