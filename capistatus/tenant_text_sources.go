package capistatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// snapshotMessages are every message of the snapshot's objects that status
// derivation may quote: conditions of both condition sets, failure
// messages and addons' failures.
func snapshotMessages(snap Snapshot) []string {
	var out []string
	v2 := func(conds []metav1.Condition) {
		for _, c := range conds {
			out = append(out, c.Message)
		}
	}
	v1 := func(conds clusterv1.Conditions) {
		for _, c := range conds {
			out = append(out, c.Message)
		}
	}
	if o := snap.InfraCluster; o != nil {
		v1(o.Status.Conditions)
		out = append(out, deref(o.Status.FailureMessage))
	}
	if c := snap.Cluster; c != nil {
		v2(c.Status.Conditions)
		v1(clusterV1(c))
		if d := c.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			out = append(out, deref(d.V1Beta1.FailureMessage))
		}
	}
	if k := snap.ControlPlane; k != nil {
		v2(k.Status.Conditions)
		v1(controlPlaneV1(k))
		if d := k.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			out = append(out, deref(d.V1Beta1.FailureMessage))
		}
	}
	for i := range snap.MachineDeployments {
		v2(snap.MachineDeployments[i].Status.Conditions)
		v1(deploymentV1(&snap.MachineDeployments[i]))
	}
	for i := range snap.Machines {
		m := &snap.Machines[i]
		v2(m.Status.Conditions)
		v1(machineV1(m))
		if d := m.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			out = append(out, deref(d.V1Beta1.FailureMessage))
		}
	}
	for i := range snap.Servers {
		v1(snap.Servers[i].Status.Conditions)
	}
	for _, a := range snap.Addons {
		out = append(out, a.FailureMessage)
	}
	return out
}
