package helmvalues

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestAsValuesFile(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"int", 3, 3.0},
		{"int64", int64(-2), -2.0},
		{"uint16", uint16(6443), 6443.0},
		{"float32", float32(0.5), 0.5},
		{"string list", []string{"a", "b"}, []any{"a", "b"}},
		{"typed map", map[string]int{"min": 1, "max": 4}, map[string]any{"min": 1.0, "max": 4.0}},
		{"nested", map[string]any{"nodeGroups": []any{map[string]any{"machineCountMin": 1, "autoscale": true}}},
			map[string]any{"nodeGroups": []any{map[string]any{"machineCountMin": 1.0, "autoscale": true}}}},
		{"kept", map[string]any{"s": "x", "b": false, "f": 1.5, "n": nil}, map[string]any{"s": "x", "b": false, "f": 1.5, "n": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := asValuesFile(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("asValuesFile(%#v) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestBuildGivesValuesFileTypes renders every golden input and walks the
// values: the Helm SDK hands them to the chart's templates as they are, so
// an int here is a template error in the real chart (auto_scaling_enabled
// with min/max counts: "lt $machineCountMin 0.0: incompatible types for
// comparison: int and float64").
func TestBuildGivesValuesFileTypes(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "build", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			res, err := Build(readInput(t, path), readConfig(t, path))
			// invalid.json is the one golden input made to be refused
			// (its golden file holds the errors).
			if name == "invalid" {
				if err == nil {
					t.Fatal("invalid.json built; want its errors")
				}
				return
			}
			if err != nil {
				t.Fatalf("does not build: %v", err)
			}
			if bad := notValuesFileTyped(res.Values, ""); bad != "" {
				t.Error(bad)
			}
		})
	}
}

func notValuesFileTyped(node any, path string) string {
	switch v := node.(type) {
	case nil, string, bool, float64:
		return ""
	case map[string]any:
		for k, item := range v {
			if bad := notValuesFileTyped(item, joinPath(path, k)); bad != "" {
				return bad
			}
		}
		return ""
	case []any:
		for i, item := range v {
			if bad := notValuesFileTyped(item, fmt.Sprintf("%s[%d]", path, i)); bad != "" {
				return bad
			}
		}
		return ""
	}
	return fmt.Sprintf("%s is a %T (%v), which no values file gives", path, node, node)
}
