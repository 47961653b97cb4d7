package helmvalues

import (
	"strings"
	"testing"
)

func TestDiffValues(t *testing.T) {
	group := func(name string, count int) map[string]any {
		return map[string]any{"name": name, "machineFlavor": "m1", "machineCount": count}
	}
	tests := []struct {
		name     string
		old, new map[string]any
		want     []string
	}{
		{"identical", map[string]any{"a": 1}, map[string]any{"a": 1}, nil},
		{"scalar change", map[string]any{"a": map[string]any{"b": "x"}}, map[string]any{"a": map[string]any{"b": "y"}}, []string{`~ a.b: "x" -> "y"`}},
		{"added and removed keys", map[string]any{"a": 1}, map[string]any{"b": true}, []string{"- a: 1", "+ b: true"}},
		{"null is a value", map[string]any{"r": nil}, map[string]any{}, []string{"- r: null"}},
		{"node groups by name, order ignored",
			map[string]any{"nodeGroups": []any{group("a", 1), group("b", 2)}},
			map[string]any{"nodeGroups": []any{group("b", 3), group("c", 1)}},
			[]string{
				`- nodeGroups[name=a]: {"machineCount":1,"machineFlavor":"m1","name":"a"}`,
				"~ nodeGroups[name=b].machineCount: 2 -> 3",
				`+ nodeGroups[name=c]: {"machineCount":1,"machineFlavor":"m1","name":"c"}`,
			}},
		{"plain lists compared whole", map[string]any{"l": []any{"a", "b"}}, map[string]any{"l": []any{"b", "a"}}, []string{`~ l: ["a","b"] -> ["b","a"]`}},
		{"unnamed maps by position", map[string]any{"p": []any{map[string]any{}, map[string]any{"n": "x"}}}, map[string]any{"p": []any{map[string]any{}}}, []string{`- p[1].n: "x"`}},
		{"keys with dots", map[string]any{"m": map[string]any{"docker.io": []any{"u"}}}, map[string]any{"m": map[string]any{"docker.io": []any{"v"}}}, []string{`~ m["docker.io"]: ["u"] -> ["v"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range DiffValues(tt.old, tt.new) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("DiffValues:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
