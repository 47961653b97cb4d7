package capisim

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// updateStatus derives the MachineDeployment's status from its MachineSets
// and Machines, like CAPI's MachineDeployment updateStatus.
func (r *machineDeploymentReconciler) updateStatus(s *machineDeploymentScope) {
	md := s.md
	st := &md.Status
	gen := md.Generation
	if sel, err := metav1.LabelSelectorAsSelector(&md.Spec.Selector); err == nil {
		st.Selector = sel.String()
	}
	var replicas, ready, available, upToDate int32
	var versions []clusterv1.StatusVersion
	for _, ms := range s.machineSets {
		replicas += deref(ms.Status.Replicas, 0)
		ready += deref(ms.Status.ReadyReplicas, 0)
		available += deref(ms.Status.AvailableReplicas, 0)
		upToDate += deref(ms.Status.UpToDateReplicas, 0)
		versions = append(versions, ms.Status.Versions...)
	}
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = ptrTo(replicas), ptrTo(ready), ptrTo(available), ptrTo(upToDate)
	st.Versions = aggregateVersions(versions)

	desired := deref(md.Spec.Replicas, 0)
	switch {
	case md.Spec.Replicas == nil:
		st.Phase = string(clusterv1.MachineDeploymentPhaseUnknown)
	case md.DeletionTimestamp != nil:
		st.Phase = string(clusterv1.MachineDeploymentPhaseScalingDown)
	case desired == replicas:
		st.Phase = string(clusterv1.MachineDeploymentPhaseRunning)
	case desired < replicas:
		st.Phase = string(clusterv1.MachineDeploymentPhaseScalingDown)
	default:
		st.Phase = string(clusterv1.MachineDeploymentPhaseScalingUp)
	}

	conds := &st.Conditions
	_, unavailable := rolloutLimits(md, desired)
	minAvailable := desired - unavailable
	switch {
	case md.DeletionTimestamp != nil:
		setCond(conds, gen, clusterv1.MachineDeploymentAvailableCondition, metav1.ConditionFalse, clusterv1.MachineDeploymentNotAvailableReason, "Deletion in progress")
	case available >= minAvailable:
		setCond(conds, gen, clusterv1.MachineDeploymentAvailableCondition, metav1.ConditionTrue, clusterv1.MachineDeploymentAvailableReason, "")
	default:
		setCond(conds, gen, clusterv1.MachineDeploymentAvailableCondition, metav1.ConditionFalse, clusterv1.MachineDeploymentNotAvailableReason,
			fmt.Sprintf("%d available replicas, at least %d required (spec.strategy.rollout.maxUnavailable is %d, spec.replicas is %d)", available, minAvailable, unavailable, desired))
	}
	setMachinesCondition(conds, gen, s.machines, clusterv1.MachineReadyCondition, clusterv1.MachineDeploymentMachinesReadyCondition,
		clusterv1.MachineDeploymentMachinesReadyReason, clusterv1.MachineDeploymentMachinesNotReadyReason,
		clusterv1.MachineDeploymentMachinesReadyUnknownReason, clusterv1.MachineDeploymentMachinesReadyNoReplicasReason)
	setMachinesCondition(conds, gen, s.machines, clusterv1.MachineUpToDateCondition, clusterv1.MachineDeploymentMachinesUpToDateCondition,
		clusterv1.MachineDeploymentMachinesUpToDateReason, clusterv1.MachineDeploymentMachinesNotUpToDateReason,
		clusterv1.MachineDeploymentMachinesUpToDateUnknownReason, clusterv1.MachineDeploymentMachinesUpToDateNoReplicasReason)

	// A Machine rolls out when its MachineSet's template differs from the
	// MachineDeployment's.
	outdated := map[string][]string{}
	msByName := map[string]*clusterv1.MachineSet{}
	for _, ms := range s.machineSets {
		msByName[format.MustFormatValue(ms.Name)] = ms
	}
	for _, m := range s.machines {
		if ms := msByName[m.Labels[clusterv1.MachineSetNameLabel]]; ms != nil {
			outdated[m.Name] = templateOutdated(&ms.Spec.Template, &md.Spec.Template)
		}
	}
	setRollingOut(conds, gen, s.machines, outdated, clusterv1.MachineDeploymentRollingOutCondition,
		clusterv1.MachineDeploymentRollingOutReason, clusterv1.MachineDeploymentNotRollingOutReason)

	scaleTo := desired
	if md.DeletionTimestamp != nil {
		scaleTo = 0
	}
	blocked := ""
	if s.newMS != nil {
		if c := meta.FindStatusCondition(s.newMS.Status.Conditions, clusterv1.MachineSetScalingUpCondition); c != nil && c.Status == metav1.ConditionTrue {
			if _, why, found := strings.Cut(c.Message, " is blocked because:\n"); found {
				blocked = why
			}
		}
	}
	setScaling(conds, gen, replicas, scaleTo, blocked,
		clusterv1.MachineDeploymentScalingUpCondition, clusterv1.MachineDeploymentScalingUpReason, clusterv1.MachineDeploymentNotScalingUpReason,
		clusterv1.MachineDeploymentScalingDownCondition, clusterv1.MachineDeploymentScalingDownReason, clusterv1.MachineDeploymentNotScalingDownReason)
	setCond(conds, gen, clusterv1.MachineDeploymentRemediatingCondition, metav1.ConditionFalse, clusterv1.MachineDeploymentNotRemediatingReason, "")
	if md.DeletionTimestamp != nil {
		setCond(conds, gen, clusterv1.MachineDeploymentDeletingCondition, metav1.ConditionTrue, clusterv1.MachineDeploymentDeletingReason,
			fmt.Sprintf("Deleting %d replicas", replicas))
	} else {
		setCond(conds, gen, clusterv1.MachineDeploymentDeletingCondition, metav1.ConditionFalse, clusterv1.MachineDeploymentNotDeletingReason, "")
	}
	setCond(conds, gen, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")

	// The deprecated v1beta1 view.
	if st.Deprecated == nil {
		st.Deprecated = &clusterv1.MachineDeploymentDeprecatedStatus{}
	}
	if st.Deprecated.V1Beta1 == nil {
		st.Deprecated.V1Beta1 = &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{}
	}
	v1 := st.Deprecated.V1Beta1
	v1.UpdatedReplicas, v1.ReadyReplicas, v1.AvailableReplicas = upToDate, ready, available
	v1.UnavailableReplicas = max(0, desired-available)
	if available >= minAvailable {
		v1beta1conditions.MarkTrue(md, clusterv1.MachineDeploymentAvailableV1Beta1Condition)
	} else {
		v1beta1conditions.MarkFalse(md, clusterv1.MachineDeploymentAvailableV1Beta1Condition, clusterv1.WaitingForAvailableMachinesV1Beta1Reason,
			clusterv1.ConditionSeverityWarning, "Minimum availability requires %d replicas, current %d available", minAvailable, available)
	}
	v1beta1conditions.SetSummary(md, v1beta1conditions.WithConditions(clusterv1.MachineDeploymentAvailableV1Beta1Condition))
	st.ObservedGeneration = md.Generation
}
