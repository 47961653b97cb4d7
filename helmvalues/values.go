package helmvalues

import (
	"fmt"
	"sort"
	"strings"
)

// put stores value at path in a tree of map[string]any, creating the maps on
// the way. Values are only ever assembled this way, never as YAML text.
func put(tree map[string]any, value any, path ...string) {
	node := tree
	for _, key := range path[:len(path)-1] {
		next, ok := node[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			node[key] = next
		}
		node = next
	}
	node[path[len(path)-1]] = value
}

// lookup returns the value at path, if every step exists.
func lookup(tree map[string]any, path ...string) (any, bool) {
	var node any = tree
	for _, key := range path {
		m, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		if node, ok = m[key]; !ok {
			return nil, false
		}
	}
	return node, true
}

// findTemplateSyntax walks the finished values for strings carrying template
// delimiters. Every input is validated where it is read, so a hit is a bug;
// this is the last guard before values reach Helm's tpl and the addon
// provider's Jinja2.
func findTemplateSyntax(node any, path string) string {
	switch v := node.(type) {
	case string:
		if hasTemplateDelimiters(v) {
			return path
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if hasTemplateDelimiters(k) {
				return joinPath(path, k)
			}
			if p := findTemplateSyntax(v[k], joinPath(path, k)); p != "" {
				return p
			}
		}
	case []any:
		for i, item := range v {
			if p := findTemplateSyntax(item, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case []string:
		for i, item := range v {
			if hasTemplateDelimiters(item) {
				return fmt.Sprintf("%s[%d]", path, i)
			}
		}
	}
	return ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[]") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	return path + "." + key
}

// stringsToAny converts a list for the values tree, where lists are []any.
func stringsToAny(items []string) []any {
	out := make([]any, len(items))
	for i, s := range items {
		out[i] = s
	}
	return out
}
