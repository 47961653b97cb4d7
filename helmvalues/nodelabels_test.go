package helmvalues

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestWorkerNodeLabelsAndTaints: the node_labels/node_taints labels (Magnum
// 15–22) and the NodeGroup fields (Magnum 23) combine per worker node group,
// the control plane takes only its own fields, and every refusal names the
// label or field and the value.
func TestWorkerNodeLabelsAndTaints(t *testing.T) {
	second := func(in *Input, labels map[string]string) {
		ng := in.NodeGroups[1]
		ng.Name, ng.UUID, ng.IsDefault, ng.Labels = "gpu", "33333333-3333-4333-8333-333333333333", false, labels
		in.NodeGroups = append(in.NodeGroups, ng)
	}
	taint := func(key, value, effect string) map[string]any {
		t := map[string]any{"key": key, "effect": effect}
		if value != "" {
			t["value"] = value
		}
		return t
	}
	const taintsOf = "kubeadmConfigSpec.joinConfiguration.nodeRegistration.taints"
	tests := []struct {
		name   string
		modify func(in *Input)
		want   map[string]map[string]any // chart node group → key → value (nil: unset)
		errors []string                  // substrings of the error, in order: field, value, expected
	}{
		{"cluster labels reach every worker group, not the control plane", func(in *Input) {
			in.Cluster.Labels = map[string]string{"node_labels": "tier=web", "node_taints": "spot:PreferNoSchedule"}
			in.NodeGroups[0].Labels = in.Cluster.Labels // Magnum copies them into the default groups
			in.NodeGroups[1].Labels = in.Cluster.Labels
			second(in, in.Cluster.Labels)
		}, map[string]map[string]any{
			"default-worker": {"nodeLabels": map[string]any{"tier": "web"}, taintsOf: []any{taint("spot", "", "PreferNoSchedule")}},
			"gpu":            {"nodeLabels": map[string]any{"tier": "web"}, taintsOf: []any{taint("spot", "", "PreferNoSchedule")}},
		}, nil},
		{"a node group's own label replaces the cluster's", func(in *Input) {
			in.Cluster.Labels = map[string]string{"node_labels": "tier=web"}
			second(in, map[string]string{"node_labels": "tier=batch,example.com/gpu=a100", "node_taints": "example.com/gpu=a100:NoSchedule"})
		}, map[string]map[string]any{
			"default-worker": {"nodeLabels": map[string]any{"tier": "web"}, taintsOf: nil},
			"gpu":            {"nodeLabels": map[string]any{"tier": "batch", "example.com/gpu": "a100"}, taintsOf: []any{taint("example.com/gpu", "a100", "NoSchedule")}},
		}, nil},
		{"Magnum 23's fields override the labels key by key", func(in *Input) {
			in.Cluster.Labels = map[string]string{"node_labels": "tier=web,zone=a", "node_taints": "spot:PreferNoSchedule,dedicated=web:NoSchedule"}
			in.NodeGroups[1].NodeLabels = map[string]string{"tier": "db"}
			in.NodeGroups[1].NodeTaints = []Taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}}
		}, map[string]map[string]any{
			"default-worker": {"nodeLabels": map[string]any{"tier": "db", "zone": "a"},
				taintsOf: []any{taint("spot", "", "PreferNoSchedule"), taint("dedicated", "db", "NoSchedule")}},
		}, nil},
		{"fields alone, as Magnum 23 sends them", func(in *Input) {
			in.NodeGroups[1].NodeLabels = map[string]string{"node.kubernetes.io/pool": "gpu", "example.com/team": ""}
			in.NodeGroups[1].NodeTaints = []Taint{{Key: "nvidia.com/gpu", Effect: "NoExecute"}}
		}, map[string]map[string]any{
			"default-worker": {"nodeLabels": map[string]any{"node.kubernetes.io/pool": "gpu", "example.com/team": ""},
				taintsOf: []any{taint("nvidia.com/gpu", "", "NoExecute")}},
		}, nil},
		{"a bad cluster label is refused naming the label", func(in *Input) {
			in.Cluster.Labels = map[string]string{"node_labels": "kubernetes.io/role=worker"}
		}, nil, []string{"labels.node_labels", `"kubernetes.io/role=worker"`, "a label kubelet may set on its node"}},
		{"a bad node group label is refused naming the node group", func(in *Input) {
			second(in, map[string]string{"node_taints": "gpu=yes:Sometimes"})
		}, nil, []string{"nodegroups[gpu].labels.node_taints", `"gpu=yes:Sometimes"`, "NoSchedule, PreferNoSchedule or NoExecute"}},
		{"a label value over 63 characters", func(in *Input) {
			in.NodeGroups[1].NodeLabels = map[string]string{"team": strings.Repeat("x", 64)}
		}, nil, []string{"nodegroups[default-worker].node_labels.team", strings.Repeat("x", 64), "at most 63 characters"}},
		{"a field taint without a key", func(in *Input) {
			in.NodeGroups[1].NodeTaints = []Taint{{Effect: "NoSchedule"}}
		}, nil, []string{"nodegroups[default-worker].node_taints[0].key", `""`, "a Kubernetes taint key"}},
		{"a field label in the chart's namespace", func(in *Input) {
			in.NodeGroups[1].NodeLabels = map[string]string{"capi.stackhpc.com/node-group": "x"}
		}, nil, []string{"nodegroups[default-worker].node_labels", "capi.stackhpc.com/node-group", "outside capi.stackhpc.com/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			tt.modify(&in)
			res, ok := buildChecked(t, in, DefaultConfig(), tt.errors)
			if !ok {
				return
			}
			if _, ok := lookup(res.Values, "controlPlane", "nodeLabels"); ok {
				t.Error("the node_labels label reached the control plane")
			}
			groups, _ := lookup(res.Values, "nodeGroups")
			for _, g := range groups.([]any) {
				group := g.(map[string]any)
				for key, want := range tt.want[group["name"].(string)] {
					got, _ := lookup(group, strings.Split(key, ".")...)
					g, _ := yaml.Marshal(got)
					w, _ := yaml.Marshal(want)
					if string(g) != string(w) {
						t.Errorf("%s: %s = %s, want %s", group["name"], key, g, w)
					}
				}
			}
		})
	}
}

// assertErrorNames checks that one error message holds every part, in order.
func assertErrorNames(t *testing.T, err error, parts []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %q", parts)
	}
	for _, msg := range splitErrors(err) {
		rest, found := msg, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				found = false
				break
			}
			rest = rest[i+len(p):]
		}
		if found {
			return
		}
	}
	t.Errorf("no error naming %q in %q", parts, splitErrors(err))
}
