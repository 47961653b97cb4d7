package clusters

import (
	"context"
	"sort"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// markForRemoval annotates the Machines named in change.RemoveNodes with
// CAPI's delete-machine annotation: when the MachineDeployment then shrinks,
// CAPI removes those first. Magnum (and the autoscaler through it) names
// nodes by Nova server id or by name, and users copy what Magnum shows them
// (node_addresses), so a Machine matches on its name, its Node's name, its
// OpenStack server id (providerID), its infrastructure machine's name or one
// of its addresses. Every entry must match a machine of the node group; all
// are checked before any is marked.
func (s *Service) markForRemoval(ctx context.Context, op *operation, change Change) error {
	mc, ns, spec := op.mc, op.ns, op.spec
	var group *helmvalues.NodeGroup
	for i := range spec.NodeGroups {
		if spec.NodeGroups[i].UUID == change.NodeGroupUUID {
			group = &spec.NodeGroups[i]
		}
	}
	if group == nil {
		return &helmvalues.FieldError{Field: "nodegroup_uuid", Value: change.NodeGroupUUID, Expected: "a node group of the cluster"}
	}
	objs, err := mc.Cache.Objects(ctx, ns, spec.Cluster.StackID)
	if err != nil {
		return err
	}
	chartName := helmvalues.NodeGroupName(spec.Cluster.StackID, group.Name)
	var mine []clusterv1.Machine
	for _, m := range objs.Machines {
		if group.Role == "master" {
			if _, cp := m.Labels[clusterv1.MachineControlPlaneLabel]; cp {
				mine = append(mine, m)
			}
		} else if m.Labels[kube.ChartNodeGroupLabel] == chartName {
			mine = append(mine, m)
		}
	}
	var marks []string
	var unknown []string
	for _, node := range change.RemoveNodes {
		if name := matchMachine(mine, node); name != "" {
			marks = append(marks, name)
		} else {
			unknown = append(unknown, node)
		}
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(mine))
		for _, m := range mine {
			known = append(known, describeNode(m))
		}
		sort.Strings(known)
		return &helmvalues.FieldError{
			Field: "nodes_to_remove", Value: strings.Join(unknown, ","),
			Expected: "nodes of node group " + group.Name + " (" + strings.Join(known, ", ") + ")",
		}
	}
	for _, name := range marks {
		if err := mc.Kube.AnnotateMachine(ctx, ns, name, kube.DeleteMachineAnnotation, "magnum-capi"); err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "machines marked for removal", "stack_id", spec.Cluster.StackID, "machines", marks)
	return nil
}

func matchMachine(machines []clusterv1.Machine, node string) string {
	for _, m := range machines {
		if m.Name == node || nodeName(m) == node || m.Spec.InfrastructureRef.Name == node ||
			(m.Spec.ProviderID != "" && strings.TrimPrefix(m.Spec.ProviderID, "openstack:///") == node) ||
			hasAddress(m, node) {
			return m.Name
		}
	}
	return ""
}

// hasAddress: node is one of the machine's IP addresses, as Magnum lists them
// in the node group's node_addresses.
func hasAddress(m clusterv1.Machine, node string) bool {
	for _, a := range m.Status.Addresses {
		if (a.Type == clusterv1.MachineInternalIP || a.Type == clusterv1.MachineExternalIP) && a.Address == node {
			return true
		}
	}
	return false
}

// describeNode names a machine the way a user may name it back: its node
// name and its address (Magnum's node_addresses).
func describeNode(m clusterv1.Machine) string {
	for _, t := range []clusterv1.MachineAddressType{clusterv1.MachineInternalIP, clusterv1.MachineExternalIP} {
		for _, a := range m.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return nodeName(m) + " " + a.Address
			}
		}
	}
	return nodeName(m)
}

func nodeName(m clusterv1.Machine) string {
	if m.Status.NodeRef.IsDefined() {
		return m.Status.NodeRef.Name
	}
	return m.Name
}
