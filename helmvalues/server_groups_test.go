package helmvalues

import (
	"reflect"
	"testing"
)

func TestServerGroupSlots(t *testing.T) {
	ng := func(name, id string) map[string]any {
		m := map[string]any{"name": name}
		if id != "" {
			m["serverGroupId"] = id
		}
		return m
	}
	tests := []struct {
		name      string
		values    map[string]any
		wantCP    bool
		wantSlots []string
	}{
		{"no labels: every place", map[string]any{"nodeGroups": []any{ng("a", ""), ng("b", "")}}, true, []string{"a", "b"}},
		{"control_plane_server_group_id given", map[string]any{"controlPlane": map[string]any{"serverGroupId": "x"}, "nodeGroups": []any{ng("a", "")}}, false, []string{"a"}},
		{"a node group's own server_group_id", map[string]any{"nodeGroups": []any{ng("a", "y"), ng("b", "")}}, true, []string{"b"}},
		{"cluster-wide server_group_id fills every worker group", map[string]any{"nodeGroupDefaults": map[string]any{"serverGroupId": "z"}, "nodeGroups": []any{ng("a", "")}}, true, nil},
		{"no worker node groups", map[string]any{"nodeGroups": []any{}}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp, slots := ServerGroupSlots(tt.values)
			if cp != tt.wantCP || !reflect.DeepEqual(slots, tt.wantSlots) {
				t.Errorf("ServerGroupSlots = %v, %v; want %v, %v", cp, slots, tt.wantCP, tt.wantSlots)
			}
		})
	}
}

func TestServerGroupsRoundTrip(t *testing.T) {
	values := map[string]any{"nodeGroups": []any{map[string]any{"name": "a"}, map[string]any{"name": "b", "serverGroupId": "label"}}}
	WithServerGroups(values, ServerGroupIDs{ControlPlane: "cp", NodeGroups: map[string]string{"a": "ga", "gone": "gx"}})
	got := DeployedServerGroups(values)
	want := ServerGroupIDs{ControlPlane: "cp", NodeGroups: map[string]string{"a": "ga", "b": "label"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DeployedServerGroups = %+v, want %+v", got, want)
	}
	if !got.HasNodeGroup("b") || got.HasNodeGroup("gone") {
		t.Errorf("HasNodeGroup: b should be deployed, gone should not")
	}
	if !got.Any() || DeployedServerGroups(map[string]any{"nodeGroups": []any{map[string]any{"name": "a"}}}).Any() {
		t.Errorf("Any: true with groups, false without")
	}
	shared := DeployedServerGroups(map[string]any{"nodeGroupDefaults": map[string]any{"serverGroupId": "s"}, "nodeGroups": []any{map[string]any{"name": "a"}}})
	if shared.NodeGroups["a"] != "s" || shared.ControlPlane != "" {
		t.Errorf("a group from nodeGroupDefaults: %+v", shared)
	}
}

func TestServerGroupNames(t *testing.T) {
	stack := "demo-abcdefghijkl"
	if got := ControlPlaneServerGroupName(stack); got != "demo-abcdefghijkl-control-plane" {
		t.Errorf("control plane: %s", got)
	}
	if got := NodeGroupServerGroupName(stack, NodeGroupName(stack, "default-worker")); got != "demo-abcdefghijkl-default-worker" {
		t.Errorf("node group: %s", got)
	}
	// A node group called control-plane gets a hashed chart name, so its
	// group cannot take the control plane's name.
	if got := NodeGroupServerGroupName(stack, NodeGroupName(stack, "control-plane")); got == ControlPlaneServerGroupName(stack) {
		t.Errorf("node group control-plane collides with the control plane: %s", got)
	}
}
