package helmvalues

// controlPlaneRole is the label and taint kubeadm puts on control plane
// nodes.
const controlPlaneRole = "node-role.kubernetes.io/control-plane"

// systemPodPaths are, for each addon the chart installs that runs a
// Deployment or StatefulSet in the workload cluster (DaemonSets run on every
// node anyway), where the addon's own chart takes tolerations and affinity
// under the addon's values, and the value that says the addon is on. Addons
// whose chart defaults already place them on the control plane are absent:
// the Calico operator (nodeSelector control plane), the Cinder CSI
// controller, the OpenStack cloud controller manager and k8s-keystone-auth
// (control plane DaemonSets), and the Cilium operator (tolerates every
// taint). The cluster autoscaler runs in the management cluster.
var systemPodPaths = []struct {
	enabled []string // a bool value; nil: on in every cluster
	values  []string
	pods    [][]string // below values
}{
	{nil, []string{"addons", "metricsServer", "release", "values"}, [][]string{{}}},
	{[]string{"addons", "ingress", "nginx", "enabled"}, []string{"addons", "ingress", "nginx", "release", "values"}, [][]string{{"controller"}}},
	{[]string{"addons", "ingress", "traefik", "enabled"}, []string{"addons", "ingress", "traefik", "release", "values"}, [][]string{{}}},
	{[]string{"addons", "monitoring", "enabled"}, []string{"addons", "monitoring", "kubePrometheusStack", "release", "values"}, [][]string{
		{"prometheusOperator"}, {"prometheus", "prometheusSpec"}, {"alertmanager", "alertmanagerSpec"}, {"grafana"}, {"kube-state-metrics"}}},
	{[]string{"addons", "monitoring", "enabled"}, []string{"addons", "monitoring", "lokiStack", "release", "values"}, [][]string{{"loki"}}},
	{[]string{"addons", "monitoring", "enabled"}, []string{"addons", "monitoring", "blackboxExporter", "release", "values"}, [][]string{{}}},
	{[]string{"addons", "openstack", "csiManila", "enabled"}, []string{"addons", "openstack", "csiManila", "values"}, [][]string{{"controllerplugin"}}},
	{[]string{"addons", "csi", "cephfs", "enabled"}, []string{"addons", "csi", "cephfs", "release", "values"}, [][]string{{"provisioner"}}},
}

// systemPlacement lets the cluster's system workloads run on the control
// plane when a worker group can shrink to zero nodes: each tolerates the
// control plane taint and prefers control plane nodes, so a group at zero
// need not grow for them and, once grown for the tenant's pods, can shrink
// back (the autoscaler will not empty a node that runs kube-system pods).
// The preference is not a requirement: when the control plane is full they
// run on workers. Clusters whose every worker group keeps a node are left
// as the chart places them.
func (b *builder) systemPlacement() {
	if !b.workerGroupCanBeEmpty() {
		return
	}
	tolerations := []any{map[string]any{"key": controlPlaneRole, "operator": "Exists", "effect": "NoSchedule"}}
	affinity := map[string]any{"nodeAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
		map[string]any{"weight": 100, "preference": map[string]any{"matchExpressions": []any{
			map[string]any{"key": controlPlaneRole, "operator": "Exists"}}}},
	}}}
	for _, addon := range systemPodPaths {
		if addon.enabled != nil {
			if on, _ := lookup(b.values, addon.enabled...); on != true {
				continue
			}
		}
		for _, pod := range addon.pods {
			path := append(append([]string{}, addon.values...), pod...)
			put(b.values, tolerations, append(path, "tolerations")...)
			put(b.values, affinity, append(path, "affinity")...)
		}
	}
}

// workerGroupCanBeEmpty: some worker group has no node, or may be scaled
// to none by the autoscaler.
func (b *builder) workerGroupCanBeEmpty() bool {
	groups, _ := b.values["nodeGroups"].([]any)
	for _, g := range groups {
		group, _ := g.(map[string]any)
		if count, ok := group["machineCount"].(int); ok && count == 0 {
			return true
		}
		if min, ok := group["machineCountMin"].(int); ok && min == 0 {
			return true
		}
	}
	return false
}
