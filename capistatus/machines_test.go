package capistatus

import (
	"strings"
	"testing"
)

// TestWorkerMachines: a node group's machines are found by the chart's node
// group label, or by CAPI's deployment label, which holds the
// MachineDeployment's name or, for a name longer than 63 characters, CAPI's
// hash of it.
func TestWorkerMachines(t *testing.T) {
	longMD := stack + "-" + strings.Repeat("n", 70)
	withLabels := func(name string, drop string, set map[string]string) Snapshot {
		m := workerMachine("default-worker", name, "10.0.0.9")
		delete(m.Labels, drop)
		for k, v := range set {
			m.Labels[k] = v
		}
		return Snapshot{Machines: append(converged().Machines, m)}
	}
	for _, tc := range []struct {
		name      string
		snap      Snapshot
		chartName string
		mdName    string
		want      int
	}{
		{"by the chart's node group label", converged(), "default-worker", "", 2},
		{"by CAPI's deployment label", converged(), "", stack + "-default-worker", 2},
		{"control plane machines are never workers", converged(), "", stack + "-control-plane", 0},
		{"a long MachineDeployment name, another hash", withLabels("x", labelChartNodeGroup,
			map[string]string{labelCAPIDeployment: "hash_AAAAAA_z"}), "", longMD, 0},
		// The label as a Cluster API v1.14 controller writes it for longMD
		// (FNV-32a, unpadded URL base64), worked out apart from the code.
		{"a long MachineDeployment name, CAPI's hash matches", withLabels("x", labelChartNodeGroup,
			map[string]string{labelCAPIDeployment: "hash_kP0-zw_z"}), "", longMD, 1},
		{"neither label matches", converged(), "other", stack + "-other", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := len(workerMachines(tc.snap, tc.chartName, tc.mdName)); got != tc.want {
				t.Errorf("%d machines, want %d", got, tc.want)
			}
		})
	}
}
