package clusters

import (
	"reflect"
	"sort"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

func TestPlanServerGroups(t *testing.T) {
	const stack = "demo-abcdefghijkl"
	groups := func(ngs ...map[string]any) []any {
		out := []any{}
		for _, ng := range ngs {
			out = append(out, ng)
		}
		return out
	}
	ng := func(name, id string) map[string]any {
		m := map[string]any{"name": name}
		if id != "" {
			m["serverGroupId"] = id
		}
		return m
	}
	rendered := func() map[string]any { return map[string]any{"nodeGroups": groups(ng("a", ""), ng("b", ""))} }
	tests := []struct {
		name       string
		rendered   map[string]any
		deployed   map[string]any
		fresh      bool
		wantEnsure []string
		wantIDs    helmvalues.ServerGroupIDs
	}{
		{"create: every place gets a group", rendered(), nil, true,
			[]string{stack + "-control-plane", stack + "-a", stack + "-b"}, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{}}},
		{"create retried over its own release: still found or made by name", rendered(),
			map[string]any{"controlPlane": map[string]any{"serverGroupId": "cp"}, "nodeGroups": groups(ng("a", "ga"))}, true,
			[]string{stack + "-control-plane", stack + "-a", stack + "-b"}, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{}}},
		{"resize: ids carried, nothing made",
			rendered(), map[string]any{"controlPlane": map[string]any{"serverGroupId": "cp"}, "nodeGroups": groups(ng("a", "ga"), ng("b", "gb"))}, false,
			nil, helmvalues.ServerGroupIDs{ControlPlane: "cp", NodeGroups: map[string]string{"a": "ga", "b": "gb"}}},
		{"a cluster made before server groups keeps none",
			rendered(), map[string]any{"nodeGroups": groups(ng("a", ""), ng("b", ""))}, false,
			nil, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{"a": "", "b": ""}}},
		{"create_nodegroup: only the new node group gets one",
			rendered(), map[string]any{"controlPlane": map[string]any{"serverGroupId": "cp"}, "nodeGroups": groups(ng("a", "ga"))}, false,
			[]string{stack + "-b"}, helmvalues.ServerGroupIDs{ControlPlane: "cp", NodeGroups: map[string]string{"a": "ga"}}},
		{"create_nodegroup in a cluster without server groups: none",
			rendered(), map[string]any{"nodeGroups": groups(ng("a", ""))}, false,
			nil, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{"a": ""}}},
		{"labels name groups: nothing to do",
			map[string]any{"controlPlane": map[string]any{"serverGroupId": "x"}, "nodeGroupDefaults": map[string]any{"serverGroupId": "y"}, "nodeGroups": groups(ng("a", ""))},
			nil, true, nil, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{}}},
		{"update of a cluster whose release is gone: as a create", rendered(), nil, false,
			[]string{stack + "-control-plane", stack + "-a", stack + "-b"}, helmvalues.ServerGroupIDs{NodeGroups: map[string]string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := planServerGroups(stack, tt.rendered, tt.deployed, tt.fresh)
			if !reflect.DeepEqual(w.ordered, tt.wantEnsure) {
				t.Errorf("to find or make %v, want %v", w.ordered, tt.wantEnsure)
			}
			if !reflect.DeepEqual(w.ids, tt.wantIDs) {
				t.Errorf("carried %+v, want %+v", w.ids, tt.wantIDs)
			}
		})
	}
}

func TestDeletingServerGroups(t *testing.T) {
	spec := Spec{Cluster: helmvalues.Cluster{StackID: "demo-abcdefghijkl"}, NodeGroups: []helmvalues.NodeGroup{
		{Name: "default-master", Role: "master"},
		{Name: "default-worker", Role: "worker", Status: "UPDATE_COMPLETE"},
		{Name: "gpu", Role: "worker", Status: statusDeleteInProgress},
	}}
	tests := []struct {
		name       string
		everything bool
		want       []string
	}{
		{"delete_nodegroup: the node group being deleted", false, []string{"demo-abcdefghijkl-gpu"}},
		{"delete_cluster: all", true, []string{"demo-abcdefghijkl-control-plane", "demo-abcdefghijkl-default-worker", "demo-abcdefghijkl-gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deletingServerGroups(spec, tt.everything)
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
