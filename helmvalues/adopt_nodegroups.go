package helmvalues

import (
	"fmt"
)

// overlayCounts takes from the rendered values, in place into the deployed
// ones, what Magnum's resize and node group operations change and nothing
// else: the control plane's machine count; each existing node group's
// machine count and autoscaling bounds; node groups Magnum added (their
// rendered entries, which inherit the deployed nodeGroupDefaults like their
// siblings) and removed. None of these changes a machine template: counts
// and bounds reach only MachineDeployment replicas and annotations and the
// KubeadmControlPlane's replicas. Node groups are matched by name; a group
// the other driver named differently from this driver (StackHPC does not
// shorten names that make "<release>-<name>" longer than 63 characters)
// shows up as one removed and one added group.
func overlayCounts(values, rendered map[string]any) ([]string, error) {
	if count, ok := lookup(rendered, "controlPlane", "machineCount"); ok {
		put(values, count, "controlPlane", "machineCount")
	}

	deployed, err := namedGroups(values["nodeGroups"], "deployed")
	if err != nil {
		return nil, err
	}
	wanted, err := namedGroups(rendered["nodeGroups"], "rendered")
	if err != nil {
		return nil, err
	}
	byName := map[string]map[string]any{}
	for _, g := range wanted {
		byName[g["name"].(string)] = g
	}
	out := make([]any, 0, len(wanted))
	kept := map[string]bool{}
	// Deployed groups keep their order, so the release's manifest only
	// changes where a count does.
	for _, g := range deployed {
		name := g["name"].(string)
		if want, ok := byName[name]; ok {
			kept[name] = true
			overlayGroup(g, want)
			out = append(out, g)
		}
	}
	var notes []string
	for _, g := range wanted {
		if name := g["name"].(string); !kept[name] {
			out = append(out, deepCopy(g))
			notes = append(notes, fmt.Sprintf("node group %s is new: its entry is this driver's, over the deployed nodeGroupDefaults like its siblings", name))
		}
	}
	values["nodeGroups"] = out
	return notes, nil
}

// autoscaleKeys are the keys a node group's autoscaling is made of.
var autoscaleKeys = []string{"autoscale", "machineCountMin", "machineCountMax"}

// overlayGroup sets one deployed group's count and autoscaling from the
// rendered entry (the diff shows what changed).
func overlayGroup(g, want map[string]any) {
	if count, ok := want["machineCount"]; ok {
		g["machineCount"] = count
	}
	for _, key := range autoscaleKeys {
		if now, ok := want[key]; ok {
			g[key] = now
		} else {
			delete(g, key)
		}
	}
}

// namedGroups reads a nodeGroups list whose entries are maps with distinct
// names; nil is an empty list.
func namedGroups(v any, which string) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &AdoptError{Problem: fmt.Sprintf("%s nodeGroups is %T, not a list", which, v)}
	}
	seen := map[string]bool{}
	out := make([]map[string]any, 0, len(list))
	for i, item := range list {
		g, ok := item.(map[string]any)
		name, named := g["name"].(string)
		if !ok || !named || name == "" {
			return nil, &AdoptError{Problem: fmt.Sprintf("%s nodeGroups[%d] has no name", which, i)}
		}
		if seen[name] {
			return nil, &AdoptError{Problem: fmt.Sprintf("%s nodeGroups has two groups named %s", which, name)}
		}
		seen[name] = true
		out = append(out, g)
	}
	return out, nil
}
