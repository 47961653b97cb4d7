package helmvalues

import (
	"fmt"
	"strings"
)

// Helpers shared by the control plane and the worker node groups.

// flavor returns the first non-empty flavor of the candidates (value, field),
// checked as a plain name: the chart writes it unquoted ("flavor: {{ . }}"),
// so a numeric flavor id such as "2" would reach CAPO as a number.
func (b *builder) flavor(what string, candidates ...[2]string) string {
	for _, c := range candidates {
		value, field := c[0], c[1]
		if value == "" {
			continue
		}
		if msg := checkChartScalar(value); msg != "" {
			b.p.field(field, value, "a flavor name or id the chart can write as a string: "+msg)
			return ""
		}
		return value
	}
	field := "cluster.flavor_id"
	if len(candidates) > 0 {
		field = candidates[len(candidates)-1][1]
	}
	b.p.field(field, "", "a flavor for "+what)
	return ""
}

// rootVolume is a machineRootVolume block from a size, a volume type and an
// availability zone; nil when machines boot from the flavor's disk.
func (b *builder) rootVolume(size int, volumeType, zone, field string) map[string]any {
	if size <= 0 {
		if volumeType != "" || zone != "" {
			b.warn("%s: boot_volume_type and boot_volume_availability_zone have no effect without boot_volume_size", field)
		}
		return nil
	}
	volume := map[string]any{"diskSize": size}
	if volumeType != "" {
		if b.checkVolumeType(volumeType, field+".boot_volume_type") {
			volume["volumeType"] = volumeType
		}
	}
	if zone != "" {
		volume["availabilityZone"] = zone
	}
	return volume
}

// checkVolumeType refuses a volume type the project cannot use, when the
// driver listed the project's types.
func (b *builder) checkVolumeType(name, field string) bool {
	if len(b.in.VolumeTypes) == 0 {
		return true
	}
	known := make([]string, 0, len(b.in.VolumeTypes))
	for _, vt := range b.in.VolumeTypes {
		if vt.Name == name || vt.ID == name {
			return true
		}
		known = append(known, vt.Name)
	}
	b.p.field(field, name, "one of the project's Cinder volume types: "+strings.Join(known, ", "))
	return false
}

// kubeletNodeLabelNamespaces may be set by kubelet's --node-labels; other
// labels in the kubernetes.io and k8s.io namespaces make kubelet refuse to
// start, which would leave the node group stuck.
var (
	kubeletLabels = map[string]bool{
		"kubernetes.io/hostname": true, "kubernetes.io/arch": true, "kubernetes.io/os": true,
		"beta.kubernetes.io/arch": true, "beta.kubernetes.io/os": true, "beta.kubernetes.io/instance-type": true,
		"node.kubernetes.io/instance-type": true, "topology.kubernetes.io/region": true, "topology.kubernetes.io/zone": true,
		"failure-domain.beta.kubernetes.io/region": true, "failure-domain.beta.kubernetes.io/zone": true,
	}
	kubeletLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

func kubeletAllowsLabel(key string) bool {
	namespace, _, found := strings.Cut(key, "/")
	if !found {
		return true
	}
	if kubeletLabels[key] {
		return true
	}
	for _, ns := range kubeletLabelNamespaces {
		if namespace == ns || strings.HasSuffix(namespace, "."+ns) {
			return true
		}
	}
	for _, restricted := range []string{"kubernetes.io", "k8s.io"} {
		if namespace == restricted || strings.HasSuffix(namespace, "."+restricted) {
			return false
		}
	}
	return true
}

// nodeLabels validates a node group's node_labels, which the chart joins into
// kubelet's --node-labels.
func (b *builder) nodeLabels(ng NodeGroup) map[string]any {
	if len(ng.NodeLabels) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, key := range sortedKeys(ng.NodeLabels) {
		value := ng.NodeLabels[key]
		if expected := checkNodeLabelKey(key); expected != "" {
			b.p.field(nodeGroupField(ng, "node_labels"), key, expected)
		} else if !isLabelValue(value) {
			b.p.field(nodeGroupField(ng, "node_labels."+key), value, nodeLabelValueExpected)
		} else {
			out[key] = value
		}
	}
	return out
}

// controlPlaneTaint is kubeadm's default taint on control plane nodes; it is
// kept when a master node group sets taints of its own, because kubeadm
// replaces its default by whatever list it is given.
var controlPlaneTaint = map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}

// taints validates node_taints into the kubeadm nodeRegistration form.
func (b *builder) taints(ng NodeGroup) []any {
	var out []any
	seen := map[string]bool{}
	for i, t := range ng.NodeTaints {
		field := nodeGroupField(ng, fmt.Sprintf("node_taints[%d]", i))
		part, expected := checkTaint(t)
		switch {
		case part != "":
			b.p.field(field+"."+part, t.part(part), expected)
		case seen[t.Key+":"+t.Effect]:
			b.p.field(field, t.Key+":"+t.Effect, "each key and effect at most once")
		default:
			seen[t.Key+":"+t.Effect] = true
			out = append(out, taintValue(t))
		}
	}
	return out
}

// sshKey maps the Nova keypair injected into every machine: the cluster's,
// which Magnum copies from the template when the user gives none.
func (b *builder) sshKey() {
	key, field := b.in.Cluster.Keypair, "cluster.keypair"
	if key == "" {
		key, field = b.in.ClusterTemplate.KeypairID, "cluster_template.keypair_id"
	}
	if key == "" {
		return
	}
	if msg := checkChartScalar(key); msg != "" {
		b.p.field(field, key, "a keypair name the chart can write as a string: "+msg)
		return
	}
	put(b.values, key, "machineSSHKeyName")
}
