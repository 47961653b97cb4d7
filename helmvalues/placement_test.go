package helmvalues

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestSystemPlacement: system pods tolerate and prefer the control plane
// exactly when a worker group can be empty, and only for the addons that
// are on.
func TestSystemPlacement(t *testing.T) {
	zero := 0
	three := 3
	tests := []struct {
		name   string
		change func(in *Input)
		want   []string // the values paths that get tolerations and affinity
	}{
		{"every group keeps a node", func(in *Input) {}, nil},
		{"a group resized to zero", func(in *Input) { in.NodeGroups[1].NodeCount = 0 }, []string{
			"addons.metricsServer.release.values"}},
		{"a group autoscaled from zero", func(in *Input) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "min_node_count": "0"}
			in.NodeGroups[1].MinNodeCount, in.NodeGroups[1].MaxNodeCount = &zero, &three
			in.Flavors = map[string]Flavor{in.NodeGroups[1].FlavorID: {ID: "3", Name: in.NodeGroups[1].FlavorID, VCPUs: 2, RAMMiB: 4096, DiskGiB: 40}}
		}, []string{"addons.metricsServer.release.values"}},
		{"autoscaled from one", func(in *Input) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "min_node_count": "1", "max_node_count": "3"}
		}, nil},
		{"every addon on", func(in *Input) {
			in.NodeGroups[1].NodeCount = 0
			in.Cluster.Labels = map[string]string{"monitoring_enabled": "true", "ingress_controller": "traefik", "manila_csi_enabled": "true"}
		}, []string{
			"addons.csi.cephfs.release.values.provisioner",
			"addons.ingress.traefik.release.values",
			"addons.metricsServer.release.values",
			"addons.monitoring.blackboxExporter.release.values",
			"addons.monitoring.kubePrometheusStack.release.values.alertmanager.alertmanagerSpec",
			"addons.monitoring.kubePrometheusStack.release.values.grafana",
			"addons.monitoring.kubePrometheusStack.release.values.kube-state-metrics",
			"addons.monitoring.kubePrometheusStack.release.values.prometheus.prometheusSpec",
			"addons.monitoring.kubePrometheusStack.release.values.prometheusOperator",
			"addons.monitoring.lokiStack.release.values.loki",
			"addons.openstack.csiManila.values.controllerplugin",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			tt.change(&in)
			res, err := Build(in, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			got := placedPaths(res.Values, "")
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("placed at %q, want %q", got, tt.want)
			}
			assertStrictSchema(t, res.Values)
		})
	}
}

// placedPaths lists the paths in values that hold the control plane
// toleration, checking that the affinity is beside it.
func placedPaths(node any, path string) []string {
	m, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	if list, ok := m["tolerations"].([]any); ok && len(list) == 1 {
		if tol, _ := list[0].(map[string]any); tol["key"] == controlPlaneRole && tol["effect"] == "NoSchedule" && m["affinity"] != nil {
			out = append(out, path)
		}
	}
	for k, v := range m {
		out = append(out, placedPaths(v, strings.TrimPrefix(path+"."+k, "."))...)
	}
	return out
}
