package capistatus

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// cond is one condition read from either condition set.
type cond struct {
	found                             bool
	status, reason, message, severity string
}

func (c cond) isTrue() bool  { return c.found && c.status == string(metav1.ConditionTrue) }
func (c cond) isFalse() bool { return c.found && c.status == string(metav1.ConditionFalse) }

// text is the condition's explanation for a user: the message (in the
// tenant's words: tenantText), else the reason, on one line.
func (c cond) text() string {
	if m := tenantText(c.message); m != "" {
		return truncate(m, maxConditionText)
	}
	return c.reason
}

// fullText is text() without the quoting limit, for errors a user must read
// whole (an OpenStack API error names the quota that ran out at its end).
func (c cond) fullText() string {
	if m := tenantText(c.message); m != "" {
		return truncate(m, maxReasonLen)
	}
	return c.reason
}

// isError: a v1beta1 condition with severity Error is how CAPO and CAPI v1beta1
// controllers report a reconcile error (a refused OpenStack call) that they
// will retry.
func (c cond) isError() bool {
	return c.isFalse() && c.severity == string(clusterv1.ConditionSeverityError)
}

// lookedUp, when set (by this package's tests only), is told every
// condition type derivation looks up, to check conditionTypesRead.
var lookedUp func(condType string)

func findV2(conds []metav1.Condition, t string) cond {
	if lookedUp != nil {
		lookedUp(t)
	}
	for _, c := range conds {
		if c.Type == t {
			return cond{found: true, status: string(c.Status), reason: c.Reason, message: c.Message}
		}
	}
	return cond{}
}

func findV1(conds clusterv1.Conditions, t clusterv1.ConditionType) cond {
	if lookedUp != nil {
		lookedUp(string(t))
	}
	for _, c := range conds {
		if c.Type == t {
			return v1cond(c)
		}
	}
	return cond{}
}

func v1cond(c clusterv1.Condition) cond {
	return cond{found: true, status: string(c.Status), reason: c.Reason, message: c.Message, severity: string(c.Severity)}
}

// firstOf reads the v1beta2 condition v2type and, when a controller has not
// written it (a CAPI older than 1.11 behind the v1beta2 API), the v1beta1
// condition v1type.
func firstOf(v2 []metav1.Condition, v1 clusterv1.Conditions, v2type string, v1type clusterv1.ConditionType) cond {
	if c := findV2(v2, v2type); c.found {
		return c
	}
	return findV1(v1, v1type)
}

// errorConditions are the v1beta1 conditions reporting a retried error.
func errorConditions(conds clusterv1.Conditions) []cond {
	var out []cond
	for _, c := range conds {
		if cc := v1cond(c); cc.isError() {
			out = append(out, cc)
		}
	}
	return out
}

// The deprecated v1beta1 conditions of each kind, nil-safe.

func clusterV1(c *clusterv1.Cluster) clusterv1.Conditions {
	if d := c.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		return d.V1Beta1.Conditions
	}
	return nil
}

func controlPlaneV1(k *controlplanev1.KubeadmControlPlane) clusterv1.Conditions {
	if d := k.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		return d.V1Beta1.Conditions
	}
	return nil
}

func deploymentV1(md *clusterv1.MachineDeployment) clusterv1.Conditions {
	if d := md.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		return d.V1Beta1.Conditions
	}
	return nil
}

func machineV1(m *clusterv1.Machine) clusterv1.Conditions {
	if d := m.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		return d.V1Beta1.Conditions
	}
	return nil
}
