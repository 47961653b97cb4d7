package clusters

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

func TestSingleGroup(t *testing.T) {
	spec := Spec{NodeGroups: []helmvalues.NodeGroup{
		{UUID: "m", Name: "default-master", Role: "master", IsDefault: true},
		{UUID: "w", Name: "default-worker", Role: "worker", IsDefault: true},
		{UUID: "x", Name: "gpu", Role: "worker"},
	}}
	tests := []struct {
		uuid   string
		single bool
	}{
		{"", false},  // no nodegroup: the whole cluster
		{"m", false}, // the master group: the whole cluster
		{"w", false}, // the default worker group (magnum-api's default): the whole cluster
		{"x", true},  // another worker group: on its own
		{"gone", false},
	}
	for _, tt := range tests {
		ng, single := singleGroup(spec, tt.uuid)
		if single != tt.single || (single && ng.Name != "gpu") {
			t.Errorf("singleGroup(%q) = %q, %v; want single %v", tt.uuid, ng.Name, single, tt.single)
		}
	}
}

func TestGroupVersions(t *testing.T) {
	values := map[string]any{"kubernetesVersion": "1.33.2", "nodeGroups": []any{
		map[string]any{"name": "default-worker"},
		map[string]any{"name": "gpu", "kubernetesVersion": "1.32.5"},
	}}
	for name, want := range map[string]string{"default-worker": "1.33.2", "gpu": "1.32.5", "other": "1.33.2"} {
		if got := groupVersion(values, name); got != want {
			t.Errorf("groupVersion(%s) = %q, want %q", name, got, want)
		}
	}
	md := func(group, version string) clusterv1.MachineDeployment {
		var m clusterv1.MachineDeployment
		m.ObjectMeta = metav1.ObjectMeta{Labels: map[string]string{kube.ChartNodeGroupLabel: group}}
		m.Spec.Template.Spec.Version = version
		return m
	}
	mds := []clusterv1.MachineDeployment{md("default-worker", "v1.33.2"), md("gpu", "v1.32.5")}
	for name, want := range map[string]string{"gpu": "v1.32.5", "default-worker": "v1.33.2", "new": ""} {
		if got := observedGroupVersion(mds, name); got != want {
			t.Errorf("observedGroupVersion(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestCheckGroupUpgrade(t *testing.T) {
	ng := helmvalues.NodeGroup{UUID: "6e0b5d3c-0000-4000-8000-000000000001", Name: "gpu"}
	tests := []struct {
		name                                 string
		cpCurrent, cpWanted, current, target string
		want                                 string // "" = allowed
	}{
		{"catches up with the control plane", "v1.33.2", "1.33.2", "v1.32.5", "1.33.2", ""},
		{"a patch release", "v1.33.2", "1.33.2", "v1.33.0", "1.33.4", ""},
		{"again, already there (idempotent)", "v1.33.2", "1.33.2", "v1.33.2", "1.33.2", ""},
		{"nothing observed yet", "", "1.33.2", "", "1.33.2", ""},
		{"the group not yet observed", "v1.33.2", "1.33.2", "", "1.32.5", ""},
		{"newer minor than the control plane", "v1.33.2", "1.33.2", "v1.33.2", "1.34.1",
			`nodegroup_uuid: invalid value "6e0b5d3c-0000-4000-8000-000000000001": expected an upgrade of node group "gpu" to at most the control plane's minor version v1.33, not v1.34.1 (upgrade the cluster first)`},
		{"another major", "v1.33.2", "1.33.2", "v1.33.2", "2.0.0", "at most the control plane's minor version v1.33"},
		{"a downgrade", "v1.33.2", "1.33.2", "v1.33.2", "1.32.5", `not a downgrade from v1.33.2 to v1.32.5`},
		{"the control plane would move", "v1.33.2", "1.34.1", "v1.33.2", "1.33.2", "leaves the control plane at v1.33.2; the template's v1.34.1 is a cluster upgrade"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkGroupUpgrade(ng, tt.cpCurrent, tt.cpWanted, tt.current, tt.target)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("%v, want allowed", err)
				}
				return
			}
			var fe *helmvalues.FieldError
			if !errors.As(err, &fe) || fe.Field != "nodegroup_uuid" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%v, want a FieldError on nodegroup_uuid with %q", err, tt.want)
			}
		})
	}
}
