package testchart

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// treeDiff lists where two decoded YAML documents differ, one line per path,
// with strings quoted so whitespace differences show. "" means equal.
func treeDiff(want, got any) string {
	var lines []string
	walkDiff("", want, got, &lines)
	return strings.Join(lines, "\n")
}

func walkDiff(path string, want, got any, lines *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				*lines = append(*lines, fmt.Sprintf("%s.%s: missing, want %s", path, k, show(wv)))
			case !wok:
				*lines = append(*lines, fmt.Sprintf("%s.%s: %s, want none", path, k, show(gv)))
			default:
				walkDiff(path+"."+k, wv, gv, lines)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			walkDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], lines)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*lines = append(*lines, fmt.Sprintf("%s: %s, want %s", path, show(got), show(want)))
	}
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", v)
}
