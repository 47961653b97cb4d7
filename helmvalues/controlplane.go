package helmvalues

import (
	"fmt"
)

// activeNodeGroups drops node groups Magnum is deleting: a retried
// delete_nodegroup must keep them out of the values.
func (b *builder) activeNodeGroups() (masters, workers []NodeGroup) {
	for _, ng := range b.in.NodeGroups {
		if ng.Status == statusDeleteInProgress || ng.Status == statusDeleteComplete {
			continue
		}
		if ng.Role == roleMaster {
			masters = append(masters, ng)
		} else {
			workers = append(workers, ng)
		}
	}
	return masters, workers
}

// controlPlane maps the master node group: machine count and flavor, health
// check, failure domains, boot volume, server group, node labels and taints.
func (b *builder) controlPlane() {
	t, c := b.in.ClusterTemplate, b.in.Cluster
	masters, _ := b.activeNodeGroups()
	var master NodeGroup
	count, countField := c.MasterCount, "cluster.master_count"
	switch len(masters) {
	case 0:
	case 1:
		master = masters[0]
		count, countField = master.NodeCount, nodeGroupField(master, "node_count")
	default:
		b.p.field("nodegroups", fmt.Sprintf("%d master node groups", len(masters)), "exactly one node group with role master")
		return
	}

	flavor := b.flavor("the control plane",
		[2]string{master.FlavorID, nodeGroupField(master, "flavor_id")},
		[2]string{c.MasterFlavorID, "cluster.master_flavor_id"},
		[2]string{t.MasterFlavorID, "cluster_template.master_flavor_id"})
	if flavor != "" {
		put(b.values, flavor, "controlPlane", "machineFlavor")
	}
	switch {
	case count < 1 || count > 99:
		b.p.field(countField, fmt.Sprint(count), "between 1 and 99 control plane nodes")
	default:
		if count%2 == 0 {
			b.warn("%d control plane nodes: an even count tolerates no more etcd failures than %d", count, count-1)
		}
		put(b.values, count, "controlPlane", "machineCount")
	}

	put(b.values, b.labels.boolean("auto_healing_enabled"), "controlPlane", "healthCheck", "enabled")

	zones := b.labels.list("control_plane_availability_zones")
	if len(zones) == 0 && b.labels.str("availability_zone") != "" {
		zones = []string{b.labels.str("availability_zone")}
	}
	if len(zones) > 0 {
		put(b.values, stringsToAny(zones), "controlPlane", "failureDomains")
		put(b.values, false, "controlPlane", "omitFailureDomain")
	}

	size, _ := b.labels.integer("boot_volume_size")
	if volume := b.rootVolume(size, b.labels.str("boot_volume_type"), b.labels.str("boot_volume_availability_zone"), "labels"); volume != nil {
		put(b.values, volume, "controlPlane", "machineRootVolume")
	}
	if id := b.labels.str("control_plane_server_group_id"); id != "" {
		put(b.values, id, "controlPlane", "serverGroupId")
	}
	if len(masters) == 1 {
		if labels := b.nodeLabels(master); len(labels) > 0 {
			put(b.values, labels, "controlPlane", "nodeLabels")
		}
		if taints := b.taints(master); len(taints) > 0 {
			if !hasTaint(taints, controlPlaneTaint) {
				taints = append([]any{map[string]any{"key": controlPlaneTaint["key"], "effect": controlPlaneTaint["effect"]}}, taints...)
			}
			for _, phase := range []string{"initConfiguration", "joinConfiguration"} {
				put(b.values, taints, "controlPlane", "kubeadmConfigSpec", phase, "nodeRegistration", "taints")
			}
		}
	}
	b.controlPlaneKubeadm()
}

func hasTaint(taints []any, want map[string]any) bool {
	for _, t := range taints {
		if m, ok := t.(map[string]any); ok && m["key"] == want["key"] && m["effect"] == want["effect"] {
			return true
		}
	}
	return false
}
