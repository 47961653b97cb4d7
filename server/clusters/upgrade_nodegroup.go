package clusters

import (
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// UpgradeOptions are Magnum's upgrade arguments beyond the template.
type UpgradeOptions struct {
	// MaxBatchSize is Magnum's max_batch_size: how many machines of each
	// node group are replaced at a time (helmvalues.WithUpgradeBatch); 0
	// and 1 keep the chart's default of one.
	MaxBatchSize int
	// NodeGroupUUID is Magnum's nodegroup. Empty, a default node group or
	// the master group upgrades the whole cluster; another worker group is
	// upgraded on its own (singleGroup).
	NodeGroupUUID string
}

// singleGroup is the node group an upgrade moves on its own: a worker group
// that is not the default one. Magnum records its new image in its
// image_id, which the values map to the group's own machineImageId and
// kubernetesVersion; the control plane and the other groups keep theirs.
func singleGroup(spec Spec, uuid string) (helmvalues.NodeGroup, bool) {
	for _, ng := range spec.NodeGroups {
		if uuid != "" && ng.UUID == uuid {
			return ng, !ng.IsDefault && ng.Role != "master"
		}
	}
	return helmvalues.NodeGroup{}, false
}

// groupVersion is the Kubernetes version the values give a worker group:
// its own, else the cluster's.
func groupVersion(values map[string]any, chartName string) string {
	groups, _ := values["nodeGroups"].([]any)
	for _, g := range groups {
		m, _ := g.(map[string]any)
		if m["name"] == chartName {
			if v, ok := m["kubernetesVersion"].(string); ok {
				return v
			}
		}
	}
	v, _ := values["kubernetesVersion"].(string)
	return v
}

// observedGroupVersion is the version of the group's MachineDeployment as
// Cluster API holds it; "" when not observed.
func observedGroupVersion(mds []clusterv1.MachineDeployment, chartName string) string {
	for _, md := range mds {
		if md.Labels[kube.ChartNodeGroupLabel] == chartName {
			return md.Spec.Template.Spec.Version
		}
	}
	return ""
}

// checkGroupUpgrade refuses a single node group upgrade that the other
// parts of the cluster cannot follow, naming nodegroup_uuid: the control
// plane must stay where it is (cpWanted is what the values give it,
// cpCurrent what runs), the group must not pass the control plane's minor
// version (kubelet must not be newer than the API server) and must not go
// back. Unknown versions are not checked.
func checkGroupUpgrade(ng helmvalues.NodeGroup, cpCurrent, cpWanted, current, target string) error {
	refuse := func(expected string, args ...any) error {
		return &helmvalues.FieldError{Field: "nodegroup_uuid", Value: ng.UUID, Expected: fmt.Sprintf(expected, args...)}
	}
	cp, cpErr := parseKubeVersion(cpCurrent)
	want, wantErr := parseKubeVersion(cpWanted)
	tgt, tgtErr := parseKubeVersion(target)
	if cpErr == nil && wantErr == nil && compare(cp, want) != 0 {
		return refuse("an upgrade of node group %q alone, which leaves the control plane at %s; the template's %s is a cluster upgrade (run it without --nodegroup, or with the default worker group)",
			ng.Name, kubeVersion(cp), kubeVersion(want))
	}
	if cpErr == nil && tgtErr == nil && (tgt[0] != cp[0] || tgt[1] > cp[1]) {
		return refuse("an upgrade of node group %q to at most the control plane's minor version v%d.%d, not %s (upgrade the cluster first)",
			ng.Name, cp[0], cp[1], kubeVersion(tgt))
	}
	cur, curErr := parseKubeVersion(current)
	if curErr == nil && tgtErr == nil && compare(tgt, cur) < 0 {
		return refuse("an upgrade of node group %q, not a downgrade from %s to %s", ng.Name, kubeVersion(cur), kubeVersion(tgt))
	}
	return nil
}
