package capisim

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// updateStatus derives the Cluster's status from what load found, like
// CAPI's cluster controller updateStatus.
func (r *clusterReconciler) updateStatus(s *clusterScope) {
	c := s.cluster
	setClusterPhase(c)
	setClusterReplicas(s)

	gen := c.Generation
	conds := &c.Status.Conditions
	initialized := deref(c.Status.Initialization.ControlPlaneInitialized, false)

	// The simulator has no workload cluster to probe; it is reachable once
	// kubeadm init has run on the first control-plane machine.
	if initialized {
		setCond(conds, gen, clusterv1.ClusterRemoteConnectionProbeCondition, metav1.ConditionTrue, clusterv1.ClusterRemoteConnectionProbeSucceededReason, "")
	} else {
		setCond(conds, gen, clusterv1.ClusterRemoteConnectionProbeCondition, metav1.ConditionFalse, clusterv1.ClusterRemoteConnectionProbeFailedReason, "Remote connection not established yet")
	}
	status, reason, msg := infraReadyCondition(s)
	setCond(conds, gen, clusterv1.ClusterInfrastructureReadyCondition, status, reason, msg)
	status, reason, msg = controlPlaneAvailableCondition(s)
	setCond(conds, gen, clusterv1.ClusterControlPlaneAvailableCondition, status, reason, msg)
	if !condIsTrue(*conds, clusterv1.ClusterControlPlaneInitializedCondition) {
		switch {
		case initialized:
			setCond(conds, gen, clusterv1.ClusterControlPlaneInitializedCondition, metav1.ConditionTrue, clusterv1.ClusterControlPlaneInitializedReason, "")
		case s.kcp == nil:
			setCond(conds, gen, clusterv1.ClusterControlPlaneInitializedCondition, metav1.ConditionUnknown, clusterv1.ClusterControlPlaneDoesNotExistReason,
				fmt.Sprintf("%s does not exist", c.Spec.ControlPlaneRef.Kind))
		default:
			setCond(conds, gen, clusterv1.ClusterControlPlaneInitializedCondition, metav1.ConditionFalse, clusterv1.ClusterControlPlaneNotInitializedReason, "Control plane not yet initialized")
		}
	}

	mdSources := make([]condSource, 0, len(s.mds))
	for _, md := range s.mds {
		mdSources = append(mdSources, condSource{kind: "MachineDeployment", name: md.Name, conds: md.Status.Conditions})
	}
	if len(s.mds) == 0 {
		setCond(conds, gen, clusterv1.ClusterWorkersAvailableCondition, metav1.ConditionTrue, clusterv1.ClusterWorkersAvailableNoWorkersReason, "")
	} else {
		agg := aggregate(mdSources, clusterv1.AvailableCondition, false)
		status, reason := agg.status(clusterv1.ClusterWorkersAvailableReason, clusterv1.ClusterWorkersNotAvailableReason, clusterv1.ClusterWorkersAvailableUnknownReason)
		setCond(conds, gen, clusterv1.ClusterWorkersAvailableCondition, status, reason, agg.message)
	}

	setMachinesCondition(conds, gen, s.cpMachines, clusterv1.MachineReadyCondition, clusterv1.ClusterControlPlaneMachinesReadyCondition,
		clusterv1.ClusterControlPlaneMachinesReadyReason, clusterv1.ClusterControlPlaneMachinesNotReadyReason, clusterv1.ClusterControlPlaneMachinesReadyUnknownReason, clusterv1.ClusterControlPlaneMachinesReadyNoReplicasReason)
	setMachinesCondition(conds, gen, s.workerMachines, clusterv1.MachineReadyCondition, clusterv1.ClusterWorkerMachinesReadyCondition,
		clusterv1.ClusterWorkerMachinesReadyReason, clusterv1.ClusterWorkerMachinesNotReadyReason, clusterv1.ClusterWorkerMachinesReadyUnknownReason, clusterv1.ClusterWorkerMachinesReadyNoReplicasReason)
	setMachinesCondition(conds, gen, s.cpMachines, clusterv1.MachineUpToDateCondition, clusterv1.ClusterControlPlaneMachinesUpToDateCondition,
		clusterv1.ClusterControlPlaneMachinesUpToDateReason, clusterv1.ClusterControlPlaneMachinesNotUpToDateReason, clusterv1.ClusterControlPlaneMachinesUpToDateUnknownReason, clusterv1.ClusterControlPlaneMachinesUpToDateNoReplicasReason)
	setMachinesCondition(conds, gen, s.workerMachines, clusterv1.MachineUpToDateCondition, clusterv1.ClusterWorkerMachinesUpToDateCondition,
		clusterv1.ClusterWorkerMachinesUpToDateReason, clusterv1.ClusterWorkerMachinesNotUpToDateReason, clusterv1.ClusterWorkerMachinesUpToDateUnknownReason, clusterv1.ClusterWorkerMachinesUpToDateNoReplicasReason)

	// RollingOut, ScalingUp and ScalingDown gather the control plane's and
	// the MachineDeployments' conditions of the same name.
	movers := mdSources
	if s.kcp != nil {
		movers = append([]condSource{{kind: "KubeadmControlPlane", name: s.kcp.Name, conds: s.kcp.Status.Conditions}}, mdSources...)
	}
	for _, m := range []struct{ typ, yes, no string }{
		{clusterv1.ClusterRollingOutCondition, clusterv1.ClusterRollingOutReason, clusterv1.ClusterNotRollingOutReason},
		{clusterv1.ClusterScalingUpCondition, clusterv1.ClusterScalingUpReason, clusterv1.ClusterNotScalingUpReason},
		{clusterv1.ClusterScalingDownCondition, clusterv1.ClusterScalingDownReason, clusterv1.ClusterNotScalingDownReason},
	} {
		if agg := aggregate(movers, m.typ, true); agg.issue {
			setCond(conds, gen, m.typ, metav1.ConditionTrue, m.yes, agg.message)
		} else {
			setCond(conds, gen, m.typ, metav1.ConditionFalse, m.no, "")
		}
	}
	setCond(conds, gen, clusterv1.ClusterRemediatingCondition, metav1.ConditionFalse, clusterv1.ClusterNotRemediatingReason, "")
	if c.DeletionTimestamp != nil {
		setCond(conds, gen, clusterv1.ClusterDeletingCondition, metav1.ConditionTrue, s.deletingReason, s.deletingMessage)
	} else {
		setCond(conds, gen, clusterv1.ClusterDeletingCondition, metav1.ConditionFalse, clusterv1.ClusterNotDeletingReason, "")
	}
	setCond(conds, gen, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")
	setSummaryCondition(conds, gen, clusterv1.ClusterAvailableCondition, clusterv1.ClusterAvailableReason, clusterv1.ClusterNotAvailableReason, clusterv1.ClusterAvailableUnknownReason,
		[]string{clusterv1.ClusterDeletingCondition},
		clusterv1.ClusterDeletingCondition, clusterv1.ClusterRemoteConnectionProbeCondition, clusterv1.ClusterInfrastructureReadyCondition,
		clusterv1.ClusterControlPlaneAvailableCondition, clusterv1.ClusterWorkersAvailableCondition)

	v1beta1conditions.SetSummary(c, v1beta1conditions.WithConditions(
		clusterv1.ControlPlaneReadyV1Beta1Condition, clusterv1.InfrastructureReadyV1Beta1Condition))
	c.Status.ObservedGeneration = c.Generation
}

// setMachinesCondition aggregates one condition of Machines into a
// condition of their owner.
func setMachinesCondition(conds *[]metav1.Condition, gen int64, machines []*clusterv1.Machine, from, to, ok, notOK, unknown, none string) {
	if len(machines) == 0 {
		setCond(conds, gen, to, metav1.ConditionTrue, none, "")
		return
	}
	agg := aggregate(machineSources(machines), from, false)
	status, reason := agg.status(ok, notOK, unknown)
	setCond(conds, gen, to, status, reason, agg.message)
}

// setSummaryCondition sets typ True when every listed condition is in its
// good state (True, or False for the negative ones); False when one is in
// its bad state; else Unknown. The message lists the offending conditions'
// messages, like CAPI's summary conditions.
func setSummaryCondition(conds *[]metav1.Condition, gen int64, typ, ok, notOK, unknown string, negative []string, of ...string) {
	var lines []string
	issue, unsure := false, false
	for _, t := range of {
		good, bad := metav1.ConditionTrue, metav1.ConditionFalse
		for _, n := range negative {
			if n == t {
				good, bad = metav1.ConditionFalse, metav1.ConditionTrue
			}
		}
		c := meta.FindStatusCondition(*conds, t)
		switch {
		case c == nil:
			unsure = true
			lines = append(lines, fmt.Sprintf("* %s: Condition not yet reported", t))
		case c.Status != good:
			if c.Status == bad {
				issue = true
			} else {
				unsure = true
			}
			msg := c.Message
			if msg == "" {
				msg = c.Reason
			}
			lines = append(lines, fmt.Sprintf("* %s: %s", t, indentFollowing(msg)))
		}
	}
	switch {
	case issue:
		setCond(conds, gen, typ, metav1.ConditionFalse, notOK, strings.Join(lines, "\n"))
	case unsure:
		setCond(conds, gen, typ, metav1.ConditionUnknown, unknown, strings.Join(lines, "\n"))
	default:
		setCond(conds, gen, typ, metav1.ConditionTrue, ok, "")
	}
}

// infraReadyCondition mirrors the infrastructure cluster's Ready condition.
func infraReadyCondition(s *clusterScope) (metav1.ConditionStatus, string, string) {
	c := s.cluster
	kind := c.Spec.InfrastructureRef.Kind
	if s.infra != nil {
		if ready := v1beta1conditions.Get(v1beta1conditions.UnstructuredGetter(s.infra), clusterv1.ReadyV1Beta1Condition); ready != nil {
			reason := ready.Reason
			if reason == "" {
				reason = clusterv1.ClusterInfrastructureReadyReason
				if ready.Status != "True" {
					reason = "NoReasonReported"
				}
			}
			return metav1.ConditionStatus(ready.Status), reason, ready.Message
		}
		if infraProvisioned(s.infra) {
			return metav1.ConditionTrue, clusterv1.ClusterInfrastructureReadyReason, ""
		}
		return metav1.ConditionFalse, clusterv1.ClusterInfrastructureNotReadyReason, fmt.Sprintf("%s status.initialization.provisioned is false", kind)
	}
	provisioned := deref(c.Status.Initialization.InfrastructureProvisioned, false)
	switch {
	case !s.infraNotFound:
		return metav1.ConditionUnknown, clusterv1.ClusterInfrastructureInternalErrorReason, "Please check controller logs for errors"
	case c.DeletionTimestamp != nil && provisioned:
		return metav1.ConditionFalse, clusterv1.ClusterInfrastructureDeletedReason, fmt.Sprintf("%s has been deleted", kind)
	case provisioned:
		return metav1.ConditionFalse, clusterv1.ClusterInfrastructureDeletedReason, fmt.Sprintf("%s has been deleted while the cluster still exists", kind)
	}
	return metav1.ConditionFalse, clusterv1.ClusterInfrastructureDoesNotExistReason, fmt.Sprintf("%s does not exist", kind)
}

// controlPlaneAvailableCondition mirrors the control plane's Available
// condition.
func controlPlaneAvailableCondition(s *clusterScope) (metav1.ConditionStatus, string, string) {
	c := s.cluster
	kind := c.Spec.ControlPlaneRef.Kind
	initialized := deref(c.Status.Initialization.ControlPlaneInitialized, false)
	if s.kcp != nil {
		if a := meta.FindStatusCondition(s.kcp.Status.Conditions, clusterv1.AvailableCondition); a != nil {
			return a.Status, a.Reason, a.Message
		}
		if initialized {
			return metav1.ConditionTrue, clusterv1.ClusterControlPlaneAvailableReason, ""
		}
		return metav1.ConditionFalse, clusterv1.ClusterControlPlaneNotAvailableReason, fmt.Sprintf("%s status.initialization.controlPlaneInitialized is false", kind)
	}
	switch {
	case !s.kcpNotFound:
		return metav1.ConditionUnknown, clusterv1.ClusterControlPlaneInternalErrorReason, "Please check controller logs for errors"
	case c.DeletionTimestamp != nil && initialized:
		return metav1.ConditionFalse, clusterv1.ClusterControlPlaneDeletedReason, fmt.Sprintf("%s has been deleted", kind)
	case initialized:
		return metav1.ConditionFalse, clusterv1.ClusterControlPlaneDeletedReason, fmt.Sprintf("%s has been deleted while the cluster still exists", kind)
	}
	return metav1.ConditionFalse, clusterv1.ClusterControlPlaneDoesNotExistReason, fmt.Sprintf("%s does not exist", kind)
}

// setClusterPhase follows CAPI's setPhase.
func setClusterPhase(c *clusterv1.Cluster) {
	if c.Status.Phase == "" {
		c.Status.SetTypedPhase(clusterv1.ClusterPhasePending)
	}
	if c.Spec.InfrastructureRef.IsDefined() || c.Spec.ControlPlaneRef.IsDefined() {
		c.Status.SetTypedPhase(clusterv1.ClusterPhaseProvisioning)
	}
	if deref(c.Status.Initialization.InfrastructureProvisioned, false) && c.Spec.ControlPlaneEndpoint.IsValid() {
		c.Status.SetTypedPhase(clusterv1.ClusterPhaseProvisioned)
	}
	if c.DeletionTimestamp != nil {
		c.Status.SetTypedPhase(clusterv1.ClusterPhaseDeleting)
	}
}

// setClusterReplicas surfaces the control plane's replica counters and sums
// the MachineDeployments'.
func setClusterReplicas(s *clusterScope) {
	c := s.cluster
	cp := &clusterv1.ClusterControlPlaneStatus{}
	if s.kcp != nil {
		cp.DesiredReplicas = s.kcp.Spec.Replicas
		cp.Replicas = s.kcp.Status.Replicas
		cp.ReadyReplicas = s.kcp.Status.ReadyReplicas
		cp.AvailableReplicas = s.kcp.Status.AvailableReplicas
		cp.UpToDateReplicas = s.kcp.Status.UpToDateReplicas
		cp.Versions = s.kcp.Status.Versions
	}
	c.Status.ControlPlane = cp

	w := &clusterv1.WorkersStatus{}
	add := func(sum **int32, v *int32) {
		if v != nil {
			*sum = ptrTo(deref(*sum, 0) + *v)
		}
	}
	var versions []clusterv1.StatusVersion
	for _, md := range s.mds {
		add(&w.DesiredReplicas, md.Spec.Replicas)
		add(&w.Replicas, md.Status.Replicas)
		add(&w.ReadyReplicas, md.Status.ReadyReplicas)
		add(&w.AvailableReplicas, md.Status.AvailableReplicas)
		add(&w.UpToDateReplicas, md.Status.UpToDateReplicas)
		versions = append(versions, md.Status.Versions...)
	}
	w.Versions = aggregateVersions(versions)
	c.Status.Workers = w
}
