package capisim

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// updateStatus derives the Machine's conditions and phase, like CAPI's
// Machine controller updateStatus and setMachinePhaseAndLastUpdated.
func (r *machineReconciler) updateStatus(s *machineScope) {
	m := s.machine
	gen := m.Generation
	conds := &m.Status.Conditions
	deleting := m.DeletionTimestamp != nil

	// BootstrapConfigReady mirrors the KubeadmConfig.
	bootstrapReady := s.bootstrap != nil && deref(s.bootstrap.Status.Initialization.DataSecretCreated, false)
	switch {
	case bootstrapReady:
		setCond(conds, gen, clusterv1.MachineBootstrapConfigReadyCondition, metav1.ConditionTrue, clusterv1.MachineBootstrapConfigReadyReason, "")
	case s.bootstrap == nil && deleting:
		setCond(conds, gen, clusterv1.MachineBootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigDeletedReason, "KubeadmConfig has been deleted")
	case s.bootstrap == nil:
		setCond(conds, gen, clusterv1.MachineBootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigDoesNotExistReason, "KubeadmConfig does not exist")
	case s.cluster != nil && !deref(s.cluster.Status.Initialization.ControlPlaneInitialized, false):
		setCond(conds, gen, clusterv1.MachineBootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigNotReadyReason,
			"* DataSecretAvailable: Waiting for Cluster control plane to be initialized")
	default:
		setCond(conds, gen, clusterv1.MachineBootstrapConfigReadyCondition, metav1.ConditionFalse, clusterv1.MachineBootstrapConfigNotReadyReason,
			"KubeadmConfig status.initialization.dataSecretCreated is false")
	}

	// InfrastructureReady mirrors the OpenStackMachine's Ready condition.
	infraReady := s.infra != nil && infraProvisioned(s.infra)
	switch {
	case infraReady:
		setCond(conds, gen, clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionTrue, clusterv1.MachineInfrastructureReadyReason, "")
	case s.infra == nil && deleting:
		setCond(conds, gen, clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionFalse, clusterv1.MachineInfrastructureDeletedReason, "OpenStackMachine has been deleted")
	case s.infra == nil:
		setCond(conds, gen, clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionFalse, clusterv1.MachineInfrastructureDoesNotExistReason, "OpenStackMachine does not exist")
	default:
		reason, msg := clusterv1.MachineInfrastructureNotReadyReason, "OpenStackMachine status.initialization.provisioned is false"
		if c := v1beta1conditions.Get(capoConditions{s.infra}, clusterv1.ReadyV1Beta1Condition); c != nil && c.Status != "True" {
			if c.Reason != "" {
				reason = c.Reason
			}
			if c.Message != "" {
				msg = c.Message
			}
		}
		setCond(conds, gen, clusterv1.MachineInfrastructureReadyCondition, metav1.ConditionFalse, reason, msg)
	}

	// NodeReady and NodeHealthy come from the node, once there is one.
	nodeStatus, nodeReason, nodeMsg := metav1.ConditionUnknown, clusterv1.MachineNodeInspectionFailedReason, ""
	switch {
	case s.cluster != nil && !deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false):
		nodeMsg = "Waiting for Cluster status.initialization.infrastructureProvisioned to be true"
	case s.cluster != nil && !deref(s.cluster.Status.Initialization.ControlPlaneInitialized, false) && !m.Status.NodeRef.IsDefined():
		nodeMsg = "Waiting for Cluster control plane to be initialized"
	case m.Status.NodeRef.IsDefined():
		nodeStatus, nodeReason = metav1.ConditionTrue, clusterv1.MachineNodeReadyReason
	case deleting:
		nodeReason, nodeMsg = clusterv1.MachineNodeDoesNotExistReason, "Node does not exist"
	case m.Spec.ProviderID != "":
		nodeMsg = fmt.Sprintf("Waiting for a Node with spec.providerID %s to exist", m.Spec.ProviderID)
	default:
		nodeMsg = fmt.Sprintf("Waiting for %s to report spec.providerID", m.Spec.InfrastructureRef.Kind)
	}
	setCond(conds, gen, clusterv1.MachineNodeReadyCondition, nodeStatus, nodeReason, nodeMsg)
	if nodeStatus == metav1.ConditionTrue {
		nodeReason = clusterv1.MachineNodeHealthyReason
	}
	setCond(conds, gen, clusterv1.MachineNodeHealthyCondition, nodeStatus, nodeReason, nodeMsg)

	if len(s.outdated) > 0 {
		lines := make([]string, 0, len(s.outdated))
		for _, w := range s.outdated {
			lines = append(lines, "* "+w)
		}
		setCond(conds, gen, clusterv1.MachineUpToDateCondition, metav1.ConditionFalse, clusterv1.MachineNotUpToDateReason, strings.Join(lines, "\n"))
	} else {
		setCond(conds, gen, clusterv1.MachineUpToDateCondition, metav1.ConditionTrue, clusterv1.MachineUpToDateReason, "")
	}
	setCond(conds, gen, clusterv1.MachineUpdatingCondition, metav1.ConditionFalse, clusterv1.MachineNotUpdatingReason, "")
	if deleting {
		reason, msg := s.deletingReason, s.deletingMessage
		if reason == "" {
			reason = clusterv1.MachineDeletingReason
		}
		setCond(conds, gen, clusterv1.MachineDeletingCondition, metav1.ConditionTrue, reason, msg)
	} else {
		setCond(conds, gen, clusterv1.MachineDeletingCondition, metav1.ConditionFalse, clusterv1.MachineNotDeletingReason, "")
	}
	setCond(conds, gen, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")
	setSummaryCondition(conds, gen, clusterv1.MachineReadyCondition, clusterv1.MachineReadyReason, clusterv1.MachineNotReadyReason, clusterv1.MachineReadyUnknownReason,
		[]string{clusterv1.MachineDeletingCondition, clusterv1.MachineUpdatingCondition},
		clusterv1.MachineDeletingCondition, clusterv1.MachineUpdatingCondition, clusterv1.MachineBootstrapConfigReadyCondition,
		clusterv1.MachineInfrastructureReadyCondition, clusterv1.MachineNodeHealthyCondition)
	if condIsTrue(*conds, clusterv1.MachineReadyCondition) {
		setCond(conds, gen, clusterv1.MachineAvailableCondition, metav1.ConditionTrue, clusterv1.MachineAvailableReason, "")
	} else {
		setCond(conds, gen, clusterv1.MachineAvailableCondition, metav1.ConditionFalse, clusterv1.MachineNotReadyReason, "")
	}

	// The deprecated v1beta1 view.
	if bootstrapReady {
		v1beta1conditions.MarkTrue(m, clusterv1.BootstrapReadyV1Beta1Condition)
	} else {
		v1beta1conditions.MarkFalse(m, clusterv1.BootstrapReadyV1Beta1Condition, clusterv1.WaitingForDataSecretFallbackV1Beta1Reason, clusterv1.ConditionSeverityInfo, "")
	}
	if s.infra != nil {
		v1beta1conditions.SetMirror(m, clusterv1.InfrastructureReadyV1Beta1Condition, capoConditions{s.infra},
			v1beta1conditions.WithFallbackValue(infraReady, clusterv1.WaitingForInfrastructureFallbackV1Beta1Reason, clusterv1.ConditionSeverityInfo, ""))
	}
	if m.Status.NodeRef.IsDefined() {
		v1beta1conditions.MarkTrue(m, clusterv1.MachineNodeHealthyV1Beta1Condition)
	} else {
		v1beta1conditions.MarkFalse(m, clusterv1.MachineNodeHealthyV1Beta1Condition, clusterv1.WaitingForNodeRefV1Beta1Reason, clusterv1.ConditionSeverityInfo, "")
	}
	v1beta1conditions.SetSummary(m, v1beta1conditions.WithConditions(
		clusterv1.InfrastructureReadyV1Beta1Condition, clusterv1.BootstrapReadyV1Beta1Condition),
		v1beta1conditions.WithStepCounterIf(!deleting && m.Spec.ProviderID == ""),
		v1beta1conditions.WithStepCounterIfOnly(clusterv1.BootstrapReadyV1Beta1Condition, clusterv1.InfrastructureReadyV1Beta1Condition))

	setMachinePhase(m)
	m.Status.ObservedGeneration = m.Generation
}

// setMachinePhase follows CAPI's setMachinePhaseAndLastUpdated.
func setMachinePhase(m *clusterv1.Machine) {
	before := m.Status.Phase
	if m.Status.Phase == "" {
		m.Status.SetTypedPhase(clusterv1.MachinePhasePending)
	}
	if deref(m.Status.Initialization.BootstrapDataSecretCreated, false) && !deref(m.Status.Initialization.InfrastructureProvisioned, false) {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseProvisioning)
	}
	if m.Spec.ProviderID != "" {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseProvisioned)
	}
	if m.Status.NodeRef.IsDefined() && deref(m.Status.Initialization.InfrastructureProvisioned, false) {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseRunning)
	}
	if m.DeletionTimestamp != nil {
		m.Status.SetTypedPhase(clusterv1.MachinePhaseDeleting)
	}
	if m.Status.Phase != before {
		m.Status.LastUpdated = metav1.Now()
	}
}
