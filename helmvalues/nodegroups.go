package helmvalues

import (
	"fmt"
	"reflect"
	"sort"
)

// nodeGroups maps every worker node group (role other than master) to an
// entry of nodeGroups, plus the defaults they share. The list is always sent,
// even empty, because the chart's default list holds a node group of its own.
func (b *builder) nodeGroups() {
	put(b.values, b.labels.boolean("auto_healing_enabled"), "nodeGroupDefaults", "healthCheck", "enabled")
	zone := b.labels.str("availability_zone")
	if zone != "" {
		put(b.values, zone, "nodeGroupDefaults", "failureDomain")
	}
	size, _ := b.labels.integer("boot_volume_size")
	volumeType, volumeZone := b.labels.str("boot_volume_type"), b.labels.str("boot_volume_availability_zone")
	defaultVolume := b.rootVolume(size, volumeType, volumeZone, "labels")
	serverGroup := b.labels.str("server_group_id")
	if serverGroup != "" {
		put(b.values, serverGroup, "nodeGroupDefaults", "serverGroupId")
	}
	if networks := b.labels.list("extra_network_names"); len(networks) > 0 {
		// The first, empty port is the cluster network (StackHPC's layout,
		// which the chart converts to CAPO's filters).
		ports := []any{map[string]any{}}
		for _, name := range networks {
			ports = append(ports, map[string]any{"network": map[string]any{"name": name}, "securityGroups": []any{}})
		}
		put(b.values, ports, "nodeGroupDefaults", "machineNetworking", "ports")
	}
	b.workerKubeadm()

	_, workers := b.activeNodeGroups()
	autoscaling := b.labels.boolean("auto_scaling_enabled")
	type entry struct {
		ng     NodeGroup
		name   string
		values map[string]any
		volume map[string]any
	}
	entries := make([]entry, 0, len(workers))
	owner := map[string]string{} // chart name → Magnum name
	for _, ng := range workers {
		name := NodeGroupName(b.release, ng.Name)
		if other, taken := owner[name]; taken {
			b.p.field(nodeGroupField(ng, "name"), ng.Name, fmt.Sprintf("a name that does not map to the same chart node group (%s) as node group %q", name, other))
			continue
		}
		owner[name] = ng.Name
		if name != sanitizedName(ng.Name) {
			b.warn("node group %q is named %s in the chart: its sanitized name is not a valid chart name or is too long for release %s", ng.Name, name, b.release)
		}
		values := b.nodeGroup(ng, name, autoscaling)
		entries = append(entries, entry{ng, name, values, b.nodeGroupVolume(ng, size, volumeType, volumeZone, defaultVolume)})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })

	// The chart merges each node group over nodeGroupDefaults and cannot
	// unset a default there, so the boot volume is shared through the
	// defaults only while every node group uses the same one.
	shared := true
	for _, e := range entries {
		if !reflect.DeepEqual(e.volume, defaultVolume) {
			shared = false
		}
	}
	if shared && defaultVolume != nil {
		put(b.values, defaultVolume, "nodeGroupDefaults", "machineRootVolume")
	}
	list := make([]any, len(entries))
	for i, e := range entries {
		b.capacity(e.ng, e.name, e.values, e.volume)
		if !shared && e.volume != nil {
			e.values["machineRootVolume"] = cloneMap(e.volume)
		}
		list[i] = e.values
	}
	put(b.values, list, "nodeGroups")
}

// nodeGroupVolume is a node group's boot volume: the cluster's, with the
// node group's own boot_volume_* labels applied.
func (b *builder) nodeGroupVolume(ng NodeGroup, size int, volumeType, volumeZone string, clusterVolume map[string]any) map[string]any {
	ngSize, sizeSet := b.nodeGroupLabel(ng, "boot_volume_size")
	ngType, typeSet := b.nodeGroupLabel(ng, "boot_volume_type")
	ngZone, zoneSet := b.nodeGroupLabel(ng, "boot_volume_availability_zone")
	if !sizeSet && !typeSet && !zoneSet {
		return clusterVolume
	}
	if v, ok := ngSize.(int); sizeSet && ok {
		size = v
	}
	if v, ok := ngType.(string); typeSet && ok {
		volumeType = v
	}
	if v, ok := ngZone.(string); zoneSet && ok {
		volumeZone = v
	}
	return b.rootVolume(size, volumeType, volumeZone, nodeGroupField(ng, "labels"))
}

// nodeGroup maps one worker node group.
func (b *builder) nodeGroup(ng NodeGroup, name string, autoscaling bool) map[string]any {
	t, c := b.in.ClusterTemplate, b.in.Cluster
	values := map[string]any{"name": name}
	flavor := b.flavor(fmt.Sprintf("node group %q", ng.Name),
		[2]string{ng.FlavorID, nodeGroupField(ng, "flavor_id")},
		[2]string{c.FlavorID, "cluster.flavor_id"},
		[2]string{t.FlavorID, "cluster_template.flavor_id"})
	if flavor != "" {
		values["machineFlavor"] = flavor
	}
	if ng.NodeCount < 0 || ng.NodeCount > 1000 {
		b.p.field(nodeGroupField(ng, "node_count"), fmt.Sprint(ng.NodeCount), "between 0 and 1000 nodes")
	} else {
		values["machineCount"] = ng.NodeCount
	}
	if autoscaling {
		b.autoscale(ng, values)
	}
	b.nodeGroupImage(ng, values)

	if v, ok := b.nodeGroupLabel(ng, "availability_zone"); ok {
		values["failureDomain"] = v
	}
	if v, ok := b.nodeGroupLabel(ng, "server_group_id"); ok {
		values["serverGroupId"] = v
	}
	if labels := b.workerNodeLabels(ng); len(labels) > 0 {
		values["nodeLabels"] = labels
	}
	if taints := b.workerTaints(ng); len(taints) > 0 {
		put(values, taints, "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "taints")
	}
	b.nodeGroupKubeletArgs(ng, values)
	b.containerdVolume(ng, values)
	return values
}

// autoscale adds the autoscaler bounds of one node group.
//
// Magnum's min_node_count is non-nullable with default 0, so 0 often means
// "not given". A minimum of 0 is therefore honoured (scale from zero) only
// where someone wrote it: a min_node_count label (the default group), or a
// node group that also has a max_node_count (openstack coe nodegroup create
// --min-nodes 0 --max-nodes N); elsewhere it becomes 1, with a warning. It
// also needs the flavor's capacity (see scaleFromZero). An unset maximum is
// the node count. Groups whose bounds are equal are not autoscaled.
func (b *builder) autoscale(ng NodeGroup, values map[string]any) {
	min, minField := 0, nodeGroupField(ng, "min_node_count")
	if ng.MinNodeCount != nil {
		min = *ng.MinNodeCount
	}
	max, maxSet, maxField := 0, false, nodeGroupField(ng, "max_node_count")
	if ng.MaxNodeCount != nil {
		max, maxSet = *ng.MaxNodeCount, true
	}
	zeroMeant := !ng.IsDefault && maxSet
	if ng.IsDefault {
		if v, ok := b.labels.integer("min_node_count"); ok {
			min, minField, zeroMeant = v, "labels.min_node_count", true
		}
		if v, ok := b.labels.integer("max_node_count"); ok {
			max, maxSet, maxField = v, true, "labels.max_node_count"
		}
	}
	if min < 0 {
		b.p.field(minField, fmt.Sprint(min), "a minimum of at least 0 nodes")
		return
	}
	raised := ""
	if min == 0 {
		if raised = b.scaleFromZero(ng, zeroMeant); raised != "" {
			min = 1
		}
	}
	if !maxSet {
		max = ng.NodeCount
		if max < min {
			max = min
		}
	}
	if max < min {
		b.p.field(maxField, fmt.Sprint(max), fmt.Sprintf("a maximum of at least the minimum, %d", min))
		return
	}
	if max > 1000 {
		b.p.field(maxField, fmt.Sprint(max), "a maximum of at most 1000 nodes")
		return
	}
	if min == max {
		return
	}
	if raised != "" {
		b.warn("node group %q: autoscaling minimum 0 is raised to 1: %s", ng.Name, raised)
	}
	if ng.NodeCount < min || ng.NodeCount > max {
		b.warn("node group %q: node_count %d is outside the autoscaling range %d–%d; the autoscaler decides the size", ng.Name, ng.NodeCount, min, max)
	}
	values["autoscale"] = true
	values["machineCountMin"] = min
	values["machineCountMax"] = max
}

// scaleFromZero says why a node group's minimum of 0 cannot stand ("" when
// it can): 0 that nobody wrote is Magnum's default, and the autoscaler can
// only grow a group from zero when it is told the nodes' capacity, which
// comes from the flavor the sidecar looked up.
func (b *builder) scaleFromZero(ng NodeGroup, meant bool) string {
	switch {
	case !meant && ng.IsDefault:
		return "that is Magnum's default; the label min_node_count=0 scales the group from zero"
	case !meant:
		return "that is Magnum's default; a node group with a max_node_count too (--max-nodes) scales from zero"
	}
	if _, ok := b.groupFlavor(ng); !ok {
		return "the flavor's capacity, which scaling from zero needs, is unknown (the flavor was not looked up)"
	}
	return ""
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
