package capistatus

import (
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// groupView is one Magnum node group together with the CAPI objects that
// implement it.
type groupView struct {
	ng           NodeGroup
	controlPlane bool
	name         string // the MachineDeployment's (or KubeadmControlPlane's) name
	md           *clusterv1.MachineDeployment
	machines     []clusterv1.Machine
}

// isControlPlaneRole: Magnum's control plane node group has role "master".
func isControlPlaneRole(role string) bool { return role == "master" || role == "control-plane" }

// chartName is the node group's name in the chart's values.
func (ng NodeGroup) chartName() string {
	if ng.ChartName != "" {
		return ng.ChartName
	}
	return ng.Name
}

// deploymentName is the chart's "<release>-<node group>" cut to 63 characters
// without a trailing "-" (printf | trunc 63 | trimSuffix "-").
func deploymentName(stackID, chartName string) string {
	n := stackID + "-" + chartName
	if len(n) > 63 {
		n = n[:63]
	}
	return strings.TrimSuffix(n, "-")
}

// controlPlaneName is the KubeadmControlPlane the Cluster refers to, else the
// chart's name for it.
func controlPlaneName(stackID string, snap Snapshot) string {
	if snap.ControlPlane != nil {
		return snap.ControlPlane.Name
	}
	if c := snap.Cluster; c != nil && c.Spec.ControlPlaneRef.Name != "" {
		return c.Spec.ControlPlaneRef.Name
	}
	return stackID + "-control-plane"
}

// viewNodeGroups pairs Magnum's node groups with their objects, and returns the
// MachineDeployments no node group claims (they still count for completeness).
func viewNodeGroups(req Request, snap Snapshot) ([]groupView, []*clusterv1.MachineDeployment) {
	claimed := map[string]bool{}
	views := make([]groupView, 0, len(req.NodeGroups))
	for _, ng := range req.NodeGroups {
		v := groupView{ng: ng}
		if isControlPlaneRole(ng.Role) {
			v.controlPlane = true
			v.name = controlPlaneName(req.StackID, snap)
			v.machines = controlPlaneMachines(snap)
		} else {
			v.name = deploymentName(req.StackID, ng.chartName())
			v.md = findDeployment(snap, v.name, ng.chartName())
			if v.md != nil {
				v.name = v.md.Name
				claimed[v.md.Name] = true
			}
			v.machines = workerMachines(snap, ng.chartName(), v.name)
		}
		views = append(views, v)
	}
	var unclaimed []*clusterv1.MachineDeployment
	for i := range snap.MachineDeployments {
		if md := &snap.MachineDeployments[i]; !claimed[md.Name] {
			unclaimed = append(unclaimed, md)
		}
	}
	return views, unclaimed
}

// findDeployment finds a node group's MachineDeployment by the chart's name for
// it, else by the chart's node group label.
func findDeployment(snap Snapshot, name, chartName string) *clusterv1.MachineDeployment {
	for i := range snap.MachineDeployments {
		if snap.MachineDeployments[i].Name == name {
			return &snap.MachineDeployments[i]
		}
	}
	for i := range snap.MachineDeployments {
		if md := &snap.MachineDeployments[i]; md.Labels[labelChartNodeGroup] == chartName && chartName != "" {
			return md
		}
	}
	return nil
}

// present: anything of the group is left in the management cluster.
func (v groupView) present(snap Snapshot) bool {
	if len(v.machines) > 0 {
		return true
	}
	if v.controlPlane {
		return snap.ControlPlane != nil
	}
	return v.md != nil
}

// progressFacets: what keeps the group from being complete (nil: complete).
func (v groupView) progressFacets(snap Snapshot) []string {
	if v.controlPlane {
		return controlPlaneFacets(snap.ControlPlane, v.name, v.machines, snap.Servers)
	}
	if v.md == nil {
		return []string{"MachineDeployment " + v.name + " not found"}
	}
	return deploymentFacets(v.md, v.machines, snap.Servers)
}

// remaining: what of a deleted group still exists.
func (v groupView) remaining(snap Snapshot) []string {
	var out []string
	switch {
	case v.controlPlane && snap.ControlPlane != nil:
		out = append(out, "KubeadmControlPlane "+snap.ControlPlane.Name)
	case !v.controlPlane && v.md != nil:
		out = append(out, "MachineDeployment "+v.md.Name)
	}
	if len(v.machines) > 0 {
		out = append(out, plural(len(v.machines), "machine")+" ("+machineNames(v.machines)+")")
	}
	return out
}

// desired is the replica count CAPI holds the group at, and whether CAPI has
// observed the latest spec (only then is it the count in force).
func (v groupView) desired(snap Snapshot) (int, bool) {
	if v.controlPlane {
		if kcp := snap.ControlPlane; kcp != nil && kcp.Status.ObservedGeneration >= kcp.Generation {
			return int(controlPlaneDesired(kcp)), true
		}
		return 0, false
	}
	if v.md != nil && v.md.Status.ObservedGeneration >= v.md.Generation {
		return int(deploymentDesired(v.md)), true
	}
	return 0, false
}
