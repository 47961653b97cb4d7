package helmvalues

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Change is one difference between two sets of values.
type Change struct {
	Path string
	Kind ChangeKind
	Old  any // the value before (Kind Changed or Removed)
	New  any // the value after (Kind Changed or Added)
}

// ChangeKind says whether a path appeared, disappeared or changed.
type ChangeKind string

const (
	Added   ChangeKind = "+"
	Removed ChangeKind = "-"
	Changed ChangeKind = "~"
)

func (c Change) String() string {
	switch c.Kind {
	case Added:
		return fmt.Sprintf("+ %s: %s", c.Path, compact(c.New))
	case Removed:
		return fmt.Sprintf("- %s: %s", c.Path, compact(c.Old))
	}
	return fmt.Sprintf("~ %s: %s -> %s", c.Path, compact(c.Old), compact(c.New))
}

// compact renders a value on one line (JSON), so multi-line file contents
// stay one change line.
func compact(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(out)
}

// DiffValues lists what changes from old to new, path by path, sorted by
// path. Lists whose items all have a name (nodeGroups, storage classes) are
// compared by name, so reordering is no change and a new node group is one
// added entry; other lists of maps are compared by position, and lists of
// plain values as a whole.
func DiffValues(old, new map[string]any) []Change {
	before, after := map[string]any{}, map[string]any{}
	beforeItems, afterItems := map[string]any{}, map[string]any{}
	flatten(old, "", before, beforeItems)
	flatten(new, "", after, afterItems)
	var changes []Change
	// A named item (a node group, a storage class) that appears or
	// disappears is one change, not one per field.
	for path, item := range beforeItems {
		if _, ok := afterItems[path]; !ok {
			changes = append(changes, Change{Path: path, Kind: Removed, Old: item})
			dropPrefix(before, path)
		}
	}
	for path, item := range afterItems {
		if _, ok := beforeItems[path]; !ok {
			changes = append(changes, Change{Path: path, Kind: Added, New: item})
			dropPrefix(after, path)
		}
	}
	for path, o := range before {
		n, ok := after[path]
		switch {
		case !ok:
			changes = append(changes, Change{Path: path, Kind: Removed, Old: o})
		case compact(o) != compact(n):
			changes = append(changes, Change{Path: path, Kind: Changed, Old: o, New: n})
		}
	}
	for path, n := range after {
		if _, ok := before[path]; !ok {
			changes = append(changes, Change{Path: path, Kind: Added, New: n})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes
}

func dropPrefix(leaves map[string]any, prefix string) {
	for path := range leaves {
		if path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[") {
			delete(leaves, path)
		}
	}
}

// flatten maps every leaf of a values tree to its path, and every named
// list item to its path in items. Empty maps and lists are leaves, so that
// adding one is visible.
func flatten(node any, path string, out, items map[string]any) {
	switch v := node.(type) {
	case map[string]any:
		if len(v) == 0 {
			if path != "" {
				out[path] = v
			}
			return
		}
		for key, child := range v {
			flatten(child, joinPath(path, key), out, items)
		}
	case []any:
		if len(v) == 0 || !allMaps(v) {
			out[path] = v
			return
		}
		byName := namesUnique(v)
		for i, item := range v {
			if byName {
				itemPath := fmt.Sprintf("%s[name=%s]", path, item.(map[string]any)["name"])
				items[itemPath] = item
				flatten(item, itemPath, out, items)
			} else {
				flatten(item, fmt.Sprintf("%s[%d]", path, i), out, items)
			}
		}
	default:
		out[path] = v
	}
}

func allMaps(items []any) bool {
	for _, item := range items {
		if _, ok := item.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func namesUnique(items []any) bool {
	seen := map[string]bool{}
	for _, item := range items {
		name, ok := item.(map[string]any)["name"].(string)
		if !ok || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}
