package helmvalues

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files and docs/labels.md")

// assertGolden compares got with the golden file at path, or rewrites the
// file with -update.
func assertGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (go test ./helmvalues -update writes it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale (go test ./helmvalues -update rewrites it):\n%s", path, firstDifference(want, got))
	}
}

// firstDifference shows where two texts part, with a little context.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n  want: %q\n  got:  %q", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}

// splitErrors lists the messages of a possibly joined error.
func splitErrors(err error) []string {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

// outcome is what a golden file of one Build holds.
type outcome struct {
	ChartVersion string         `json:"chartVersion,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
	Errors       []string       `json:"errors,omitempty"`
	Values       map[string]any `json:"values,omitempty"`
	// MachineAnnotations are what the post-renderer adds to node groups'
	// MachineDeployments (scale from zero).
	MachineAnnotations map[string]map[string]string `json:"machineAnnotations,omitempty"`
}

func renderOutcome(t *testing.T, res Result, err error) []byte {
	t.Helper()
	o := outcome{ChartVersion: res.ChartVersion, Warnings: res.Warnings, Errors: splitErrors(err), Values: res.Values, MachineAnnotations: res.MachineAnnotations}
	out, mErr := yaml.Marshal(o)
	if mErr != nil {
		t.Fatal(mErr)
	}
	return out
}

func readInput(t testing.TB, path string) Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseInput(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return in
}

// readConfig reads the optional <case>.config.yaml beside an input, applied
// over DefaultConfig.
func readConfig(t testing.TB, inputPath string) Config {
	t.Helper()
	cfg := DefaultConfig()
	data, err := os.ReadFile(strings.TrimSuffix(inputPath, ".json") + ".config.yaml")
	if errors.Is(err, os.ErrNotExist) {
		return cfg
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("%s: %v", inputPath, err)
	}
	return cfg
}

// minimalInput is the smallest valid input, shared by the label tests.
func minimalInput(t testing.TB) Input {
	return readInput(t, filepath.Join("testdata", "build", "minimal.json"))
}

// buildChecked builds in: when refusals are expected it checks the error
// names them and returns false; otherwise it fails on any error and checks
// the values against the chart's keys and CAPI's kubeadm schema.
func buildChecked(t *testing.T, in Input, cfg Config, refusals []string) (Result, bool) {
	t.Helper()
	res, err := Build(in, cfg)
	if refusals != nil {
		assertErrorNames(t, err, refusals)
		return res, false
	}
	if err != nil {
		t.Fatal(err)
	}
	assertChartKeys(t, res.Values)
	assertKubeadmSchema(t, res.Values)
	return res, true
}

// assertValuesAndWarning checks res's values at dotted paths (nil: unset)
// and, unless warning is empty, that some warning contains it.
func assertValuesAndWarning(t *testing.T, res Result, want map[string]any, warning string) {
	t.Helper()
	for path, w := range want {
		got, _ := lookup(res.Values, strings.Split(path, ".")...)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", path, got, w)
		}
	}
	if warning != "" && !strings.Contains(strings.Join(res.Warnings, "\n"), warning) {
		t.Errorf("no warning %q in %q", warning, res.Warnings)
	}
}
