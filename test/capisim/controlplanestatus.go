package capisim

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// updateStatus derives the KubeadmControlPlane's status from its Machines,
// like KCP's updateStatus and updateV1Beta1Status.
func (r *controlPlaneReconciler) updateStatus(s *controlPlaneScope) {
	kcp := s.kcp
	st := &kcp.Status
	gen := kcp.Generation
	clusterName, _ := ownerName(kcp, "Cluster")
	st.Selector = fmt.Sprintf("%s=%s,%s", clusterv1.ClusterNameLabel, clusterName, clusterv1.MachineControlPlaneLabel)
	st.Versions = versionsFromMachines(s.machines)
	if len(st.Versions) > 0 {
		st.Version = st.Versions[0].Version //nolint:staticcheck // KCP still fills the deprecated field; readers use it
	}

	// Every Machine with a node runs an etcd member; healthy members are
	// those of ready Machines.
	var ready, available, upToDate, withNode, healthyMembers int32
	for _, m := range s.machines {
		if condIsTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			ready++
			if m.Status.NodeRef.IsDefined() {
				healthyMembers++
			}
		}
		if condIsTrue(m.Status.Conditions, clusterv1.MachineAvailableCondition) {
			available++
		}
		if condIsTrue(m.Status.Conditions, clusterv1.MachineUpToDateCondition) {
			upToDate++
		}
		if m.Status.NodeRef.IsDefined() && m.DeletionTimestamp == nil {
			withNode++
		}
	}
	total := int32(len(s.machines))
	// Initialized once kubeadm init has run, i.e. the first node exists;
	// it never goes back.
	if withNode > 0 {
		st.Initialization.ControlPlaneInitialized = ptrTo(true)
	}
	initialized := deref(st.Initialization.ControlPlaneInitialized, false)
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = ptrTo(total), ptrTo(ready), ptrTo(available), ptrTo(upToDate)

	conds := &st.Conditions
	setCond(conds, gen, controlplanev1.KubeadmControlPlaneInitializedCondition, boolStatus(initialized),
		pick(initialized, controlplanev1.KubeadmControlPlaneInitializedReason, controlplanev1.KubeadmControlPlaneNotInitializedReason), "")
	if s.certificates || condIsTrue(*conds, controlplanev1.KubeadmControlPlaneCertificatesAvailableCondition) {
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneCertificatesAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneCertificatesAvailableReason, "")
	}
	// Static pods and etcd members are healthy on a Machine once its node
	// is ready: there is no workload cluster to inspect.
	healthStatus, healthReason, healthMsg := metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyReason, ""
	switch {
	case s.waitingFor != "":
		healthStatus, healthReason, healthMsg = metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneEtcdClusterInspectionFailedReason, s.waitingFor
	case !initialized:
		healthStatus, healthReason, healthMsg = metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneEtcdClusterHealthUnknownReason, "Waiting for remote connection"
	}
	if initialized && s.waitingFor == "" {
		if agg := aggregate(machineSources(s.machines), clusterv1.MachineNodeReadyCondition, false); agg.issue || agg.unknown {
			healthStatus, healthReason, healthMsg = metav1.ConditionUnknown, controlplanev1.KubeadmControlPlaneEtcdClusterHealthUnknownReason, agg.message
		}
	}
	setCond(conds, gen, controlplanev1.KubeadmControlPlaneEtcdClusterHealthyCondition, healthStatus, healthReason, healthMsg)
	setCond(conds, gen, controlplanev1.KubeadmControlPlaneControlPlaneComponentsHealthyCondition, healthStatus, healthReason, healthMsg)
	setMachinesCondition(conds, gen, s.machines, clusterv1.MachineReadyCondition, controlplanev1.KubeadmControlPlaneMachinesReadyCondition,
		controlplanev1.KubeadmControlPlaneMachinesReadyReason, controlplanev1.KubeadmControlPlaneMachinesNotReadyReason,
		controlplanev1.KubeadmControlPlaneMachinesReadyUnknownReason, controlplanev1.KubeadmControlPlaneMachinesReadyNoReplicasReason)
	setMachinesCondition(conds, gen, s.machines, clusterv1.MachineUpToDateCondition, controlplanev1.KubeadmControlPlaneMachinesUpToDateCondition,
		controlplanev1.KubeadmControlPlaneMachinesUpToDateReason, controlplanev1.KubeadmControlPlaneMachinesNotUpToDateReason,
		controlplanev1.KubeadmControlPlaneMachinesUpToDateUnknownReason, controlplanev1.KubeadmControlPlaneMachinesUpToDateNoReplicasReason)
	setRollingOut(conds, gen, s.machines, s.upToDate, controlplanev1.KubeadmControlPlaneRollingOutCondition,
		controlplanev1.KubeadmControlPlaneRollingOutReason, controlplanev1.KubeadmControlPlaneNotRollingOutReason)

	desired := deref(kcp.Spec.Replicas, 1)
	if kcp.DeletionTimestamp != nil {
		desired = 0
	}
	setScaling(conds, gen, total, desired, "", controlplanev1.KubeadmControlPlaneScalingUpCondition, controlplanev1.KubeadmControlPlaneScalingUpReason, controlplanev1.KubeadmControlPlaneNotScalingUpReason,
		controlplanev1.KubeadmControlPlaneScalingDownCondition, controlplanev1.KubeadmControlPlaneScalingDownReason, controlplanev1.KubeadmControlPlaneNotScalingDownReason)
	setCond(conds, gen, controlplanev1.KubeadmControlPlaneRemediatingCondition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotRemediatingReason, "")
	switch {
	case kcp.DeletionTimestamp == nil:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneDeletingCondition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotDeletingReason, "")
	case s.waitingForWorkers:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneDeletingCondition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneDeletingWaitingForWorkersDeletionReason, "Waiting for worker Machines to be deleted")
	default:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneDeletingCondition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneDeletingWaitingForMachineDeletionReason,
			fmt.Sprintf("Deleting %d Machines", len(s.machines)))
	}
	setCond(conds, gen, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")
	// Available: initialized, and a majority of etcd members healthy.
	switch {
	case kcp.DeletionTimestamp != nil:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneAvailableCondition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableReason, "* Control plane is deleting")
	case !initialized:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneAvailableCondition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableReason, "Control plane not yet initialized")
	case 2*healthyMembers > withNode:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeadmControlPlaneAvailableReason, "")
	default:
		setCond(conds, gen, controlplanev1.KubeadmControlPlaneAvailableCondition, metav1.ConditionFalse, controlplanev1.KubeadmControlPlaneNotAvailableReason,
			fmt.Sprintf("* %d of %d etcd members are healthy, at least %d required for etcd quorum", healthyMembers, withNode, withNode/2+1))
	}

	r.updateV1Beta1Status(s, ready, upToDate, total, desired, initialized)
	st.ObservedGeneration = kcp.Generation
}

// updateV1Beta1Status fills the deprecated v1beta1 view that readers of the
// v1beta1 API (the Python driver among them) see as status.conditions.
func (r *controlPlaneReconciler) updateV1Beta1Status(s *controlPlaneScope, ready, upToDate, total, desired int32, initialized bool) {
	kcp := s.kcp
	if kcp.Status.Deprecated == nil {
		kcp.Status.Deprecated = &controlplanev1.KubeadmControlPlaneDeprecatedStatus{}
	}
	if kcp.Status.Deprecated.V1Beta1 == nil {
		kcp.Status.Deprecated.V1Beta1 = &controlplanev1.KubeadmControlPlaneV1Beta1DeprecatedStatus{}
	}
	v1 := kcp.Status.Deprecated.V1Beta1
	v1.UpdatedReplicas = upToDate
	v1.ReadyReplicas = ready
	v1.UnavailableReplicas = total - ready

	if kcp.DeletionTimestamp == nil {
		switch {
		case total < desired:
			v1beta1conditions.MarkFalse(kcp, controlplanev1.ResizedV1Beta1Condition, controlplanev1.ScalingUpV1Beta1Reason, clusterv1.ConditionSeverityWarning,
				"Scaling up control plane to %d replicas (actual %d)", desired, total)
		case total > desired:
			v1beta1conditions.MarkFalse(kcp, controlplanev1.ResizedV1Beta1Condition, controlplanev1.ScalingDownV1Beta1Reason, clusterv1.ConditionSeverityWarning,
				"Scaling down control plane to %d replicas (actual %d)", desired, total)
			v1beta1conditions.MarkTrue(kcp, controlplanev1.MachinesCreatedV1Beta1Condition)
		default:
			if ready == total {
				v1beta1conditions.MarkTrue(kcp, controlplanev1.ResizedV1Beta1Condition)
			}
			v1beta1conditions.MarkTrue(kcp, controlplanev1.MachinesCreatedV1Beta1Condition)
		}
		if outdated := total - upToDate; outdated > 0 {
			v1beta1conditions.MarkFalse(kcp, controlplanev1.MachinesSpecUpToDateV1Beta1Condition, controlplanev1.RollingUpdateInProgressV1Beta1Reason, clusterv1.ConditionSeverityWarning,
				"Rolling %d replicas with outdated spec (%d replicas up to date)", outdated, upToDate)
		} else {
			v1beta1conditions.MarkTrue(kcp, controlplanev1.MachinesSpecUpToDateV1Beta1Condition)
		}
		if initialized {
			v1beta1conditions.MarkTrue(kcp, controlplanev1.AvailableV1Beta1Condition)
		} else {
			v1beta1conditions.MarkFalse(kcp, controlplanev1.AvailableV1Beta1Condition, controlplanev1.WaitingForKubeadmInitV1Beta1Reason, clusterv1.ConditionSeverityInfo, "")
		}
	}
	if s.certificates {
		v1beta1conditions.MarkTrue(kcp, controlplanev1.CertificatesAvailableV1Beta1Condition)
	}
	getters := make([]v1beta1conditions.Getter, 0, len(s.machines))
	for _, m := range s.machines {
		getters = append(getters, m)
	}
	if len(getters) > 0 {
		v1beta1conditions.SetAggregate(kcp, controlplanev1.MachinesReadyV1Beta1Condition, getters, v1beta1conditions.AddSourceRef())
	} else {
		v1beta1conditions.MarkTrue(kcp, controlplanev1.MachinesReadyV1Beta1Condition)
	}
	if initialized && ready == total {
		v1beta1conditions.MarkTrue(kcp, controlplanev1.ControlPlaneComponentsHealthyV1Beta1Condition)
		v1beta1conditions.MarkTrue(kcp, controlplanev1.EtcdClusterHealthyV1Beta1Condition)
	} else if initialized {
		v1beta1conditions.MarkFalse(kcp, controlplanev1.ControlPlaneComponentsHealthyV1Beta1Condition, controlplanev1.ControlPlaneComponentsUnhealthyV1Beta1Reason, clusterv1.ConditionSeverityInfo,
			"Following Machines are reporting control plane info: %s", notReadyNames(s.machines))
		v1beta1conditions.MarkFalse(kcp, controlplanev1.EtcdClusterHealthyV1Beta1Condition, controlplanev1.EtcdClusterUnhealthyV1Beta1Reason, clusterv1.ConditionSeverityInfo,
			"Following Machines are reporting etcd member info: %s", notReadyNames(s.machines))
	}
	v1beta1conditions.SetSummary(kcp, v1beta1conditions.WithConditions(
		controlplanev1.MachinesCreatedV1Beta1Condition,
		controlplanev1.MachinesSpecUpToDateV1Beta1Condition,
		controlplanev1.ResizedV1Beta1Condition,
		controlplanev1.MachinesReadyV1Beta1Condition,
		controlplanev1.AvailableV1Beta1Condition,
		controlplanev1.CertificatesAvailableV1Beta1Condition,
	))
}

func notReadyNames(machines []*clusterv1.Machine) string {
	var names []string
	for _, m := range machines {
		if !condIsTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// setRollingOut sets the RollingOut condition from the Machines that are
// not up to date and why, as KCP and the MachineDeployment controller word it.
func setRollingOut(conds *[]metav1.Condition, gen int64, machines []*clusterv1.Machine, outdated map[string][]string, typ, yes, no string) {
	n := 0
	reasons := map[string]bool{}
	for _, m := range machines {
		why := outdated[m.Name]
		if len(why) == 0 {
			continue
		}
		n++
		for _, w := range why {
			reasons["* "+w] = true
		}
	}
	if n == 0 {
		setCond(conds, gen, typ, metav1.ConditionFalse, no, "")
		return
	}
	lines := make([]string, 0, len(reasons))
	for l := range reasons {
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool {
		vi, vj := strings.HasPrefix(lines[i], "* Version"), strings.HasPrefix(lines[j], "* Version")
		if vi != vj {
			return vi
		}
		return lines[i] < lines[j]
	})
	setCond(conds, gen, typ, metav1.ConditionTrue, yes, fmt.Sprintf("Rolling out %d not up-to-date replicas\n%s", n, strings.Join(lines, "\n")))
}

// setScaling sets the ScalingUp and ScalingDown conditions; blocked, when
// not empty, says why scaling up cannot proceed.
func setScaling(conds *[]metav1.Condition, gen int64, current, desired int32, blocked string, upType, upYes, upNo, downType, downYes, downNo string) {
	if current < desired {
		msg := fmt.Sprintf("Scaling up from %d to %d replicas", current, desired)
		if blocked != "" {
			msg += " is blocked because:\n" + blocked
		}
		setCond(conds, gen, upType, metav1.ConditionTrue, upYes, msg)
	} else {
		setCond(conds, gen, upType, metav1.ConditionFalse, upNo, "")
	}
	if current > desired {
		setCond(conds, gen, downType, metav1.ConditionTrue, downYes, fmt.Sprintf("Scaling down from %d to %d replicas", current, desired))
	} else {
		setCond(conds, gen, downType, metav1.ConditionFalse, downNo, "")
	}
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
