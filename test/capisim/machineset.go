package capisim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// machineSetReconciler plays CAPI's MachineSet controller.
type machineSetReconciler struct{ *Simulator }

func (r *machineSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *machineSetReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ms := &clusterv1.MachineSet{}
	if err := r.client.Get(ctx, req.NamespacedName, ms); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := r.getCluster(ctx, ms.Namespace, ms.Spec.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ms.DeletionTimestamp == nil {
		if cluster == nil {
			return after(r.opts.Step), nil
		}
		if deref(cluster.Spec.Paused, false) {
			return ctrl.Result{}, nil
		}
		if added, err := r.addFinalizer(ctx, ms, clusterv1.MachineSetFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
	}
	machines, err := r.machinesOwnedBy(ctx, ms, ms.Spec.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	original := ms.DeepCopy()
	var res ctrl.Result
	var blocked []string
	if ms.DeletionTimestamp != nil {
		if len(machines) == 0 {
			r.pace.forget(ms.UID)
			r.expect.forget(ms.UID)
			return ctrl.Result{}, r.removeFinalizer(ctx, ms, clusterv1.MachineSetFinalizer)
		}
		for _, m := range machines {
			if err := r.deleteMachine(ctx, ms, m); err != nil {
				return ctrl.Result{}, err
			}
		}
		res = after(r.opts.Step)
	} else {
		if blocked, err = r.preflightChecks(ctx, cluster, ms); err != nil {
			return ctrl.Result{}, err
		}
		if res, err = r.scale(ctx, cluster, ms, machines, blocked); err != nil {
			return res, err
		}
	}
	r.updateStatus(ms, machines, blocked)
	if !equality.Semantic.DeepEqual(original.Status, ms.Status) {
		if err := r.patchStatus(ctx, ms, original); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// scale creates the missing Machines (unless a preflight check blocks it)
// or deletes the surplus ones, in one step.
func (r *machineSetReconciler) scale(ctx context.Context, cluster *clusterv1.Cluster, ms *clusterv1.MachineSet, machines []*clusterv1.Machine, blocked []string) (ctrl.Result, error) {
	if !r.machinesSettled(ms, machines) {
		return after(r.opts.Step / 4), nil
	}
	var active []*clusterv1.Machine
	for _, m := range machines {
		if m.DeletionTimestamp == nil {
			active = append(active, m)
		}
	}
	diff := len(active) - int(deref(ms.Spec.Replicas, 0))
	switch {
	case diff == 0:
		return ctrl.Result{}, nil
	case diff < 0 && len(blocked) > 0:
		return after(r.opts.Step), nil
	}
	if d := r.pace.wait(ms.UID, "scale"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(ms.UID, "scale")
	if diff < 0 {
		for i := 0; i < -diff; i++ {
			if err := r.createWorker(ctx, cluster, ms); err != nil {
				return ctrl.Result{}, err
			}
		}
		return after(r.opts.Step), nil
	}
	for _, m := range deletionOrder(active, ms.Spec.Deletion.Order)[:diff] {
		if err := r.deleteMachine(ctx, ms, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	return after(r.opts.Step), nil
}

func (r *machineSetReconciler) createWorker(ctx context.Context, cluster *clusterv1.Cluster, ms *clusterv1.MachineSet) error {
	t := ms.Spec.Template
	labels := map[string]string{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	labels[clusterv1.MachineSetNameLabel] = format.MustFormatValue(ms.Name)
	if md, _ := ownerName(ms, "MachineDeployment"); md != "" {
		labels[clusterv1.MachineDeploymentNameLabel] = format.MustFormatValue(md)
	}
	annotations := map[string]string{}
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	if ms.Annotations[annotationReplacement] == "true" {
		annotations[annotationReplacement] = "true"
	}
	spec := *t.Spec.DeepCopy()
	m, err := r.createMachine(ctx, machinePlan{
		owner: ms, ownerGVK: gvkMachineSet, clusterName: cluster.Name, namePrefix: ms.Name,
		labels: labels, annotations: annotations, spec: spec,
		infraTemplate: t.Spec.InfrastructureRef, bootstrapTemplate: t.Spec.Bootstrap.ConfigRef,
	})
	if err != nil {
		return err
	}
	r.expect.expectCreated(ms.UID, m.Name)
	return nil
}

// deletionOrder sorts Machines most deletable first, like the MachineSet
// controller: those annotated cluster.x-k8s.io/delete-machine, then those
// not yet ready, then by the order asked for. CAPI's Random order is
// replaced by newest first, so that tests are repeatable.
func deletionOrder(machines []*clusterv1.Machine, order clusterv1.MachineSetDeletionOrder) []*clusterv1.Machine {
	out := append([]*clusterv1.Machine(nil), machines...)
	rank := func(m *clusterv1.Machine) int {
		if _, ok := m.Annotations[clusterv1.DeleteMachineAnnotation]; ok {
			return 0
		}
		if !condIsTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		ti, tj := out[i].CreationTimestamp, out[j].CreationTimestamp
		if ti.Equal(&tj) {
			return out[i].Name > out[j].Name
		}
		if order == clusterv1.OldestMachineSetDeletionOrder {
			return ti.Before(&tj)
		}
		return tj.Before(&ti)
	})
	return out
}

// preflightChecks are the MachineSet preflight checks (on by default since
// CAPI 1.9): no new Machine while the control plane is provisioning or
// upgrading, or when kubeadm could not join it (another minor version).
func (r *machineSetReconciler) preflightChecks(ctx context.Context, cluster *clusterv1.Cluster, ms *clusterv1.MachineSet) ([]string, error) {
	if _, skip := ms.Annotations[clusterv1.MachineSetSkipPreflightChecksAnnotation]; skip || !cluster.Spec.ControlPlaneRef.IsDefined() {
		return nil, nil
	}
	kcp := &controlplanev1.KubeadmControlPlane{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.ControlPlaneRef.Name}, kcp); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if kcp.Spec.Version == "" {
		return nil, nil
	}
	ref := fmt.Sprintf("KubeadmControlPlane %s/%s", kcp.Namespace, kcp.Name)
	var blocked []string
	if len(kcp.Status.Versions) == 0 {
		blocked = append(blocked, fmt.Sprintf("* %s is provisioning (%q preflight check failed)", ref, clusterv1.MachineSetPreflightCheckControlPlaneIsStable))
	} else {
		for _, v := range kcp.Status.Versions {
			if versionLess(v.Version, kcp.Spec.Version) {
				blocked = append(blocked, fmt.Sprintf("* %s is upgrading (%q preflight check failed)", ref, clusterv1.MachineSetPreflightCheckControlPlaneIsStable))
				break
			}
		}
	}
	if msVersion := ms.Spec.Template.Spec.Version; msVersion != "" {
		cpMajor, cpMinor, ok1 := minorOf(kcp.Spec.Version)
		msMajor, msMinor, ok2 := minorOf(msVersion)
		if ok1 && ok2 && cpMajor == msMajor && cpMinor != msMinor {
			blocked = append(blocked, fmt.Sprintf("* MachineSet version (%s) and ControlPlane version (%s) do not conform to kubeadm version skew policy as kubeadm only supports joining with the same major+minor version as the control plane (%q preflight check failed)",
				strings.TrimPrefix(msVersion, "v"), strings.TrimPrefix(kcp.Spec.Version, "v"), clusterv1.MachineSetPreflightCheckKubeadmVersionSkew))
		}
	}
	return blocked, nil
}

// updateStatus derives the MachineSet's status from its Machines.
func (r *machineSetReconciler) updateStatus(ms *clusterv1.MachineSet, machines []*clusterv1.Machine, blocked []string) {
	st := &ms.Status
	gen := ms.Generation
	if sel, err := metav1.LabelSelectorAsSelector(&ms.Spec.Selector); err == nil {
		st.Selector = sel.String()
	}
	var ready, available, upToDate int32
	for _, m := range machines {
		if condIsTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			ready++
		}
		if condIsTrue(m.Status.Conditions, clusterv1.MachineAvailableCondition) {
			available++
		}
		if condIsTrue(m.Status.Conditions, clusterv1.MachineUpToDateCondition) {
			upToDate++
		}
	}
	total := int32(len(machines))
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = ptrTo(total), ptrTo(ready), ptrTo(available), ptrTo(upToDate)
	st.Versions = versionsFromMachines(machines)

	conds := &st.Conditions
	setMachinesCondition(conds, gen, machines, clusterv1.MachineReadyCondition, clusterv1.MachineSetMachinesReadyCondition,
		clusterv1.MachineSetMachinesReadyReason, clusterv1.MachineSetMachinesNotReadyReason,
		clusterv1.MachineSetMachinesReadyUnknownReason, clusterv1.MachineSetMachinesReadyNoReplicasReason)
	setMachinesCondition(conds, gen, machines, clusterv1.MachineUpToDateCondition, clusterv1.MachineSetMachinesUpToDateCondition,
		clusterv1.MachineSetMachinesUpToDateReason, clusterv1.MachineSetMachinesNotUpToDateReason,
		clusterv1.MachineSetMachinesUpToDateUnknownReason, clusterv1.MachineSetMachinesUpToDateNoReplicasReason)
	desired := deref(ms.Spec.Replicas, 0)
	if ms.DeletionTimestamp != nil {
		desired = 0
	}
	setScaling(conds, gen, total, desired, strings.Join(blocked, "\n"),
		clusterv1.MachineSetScalingUpCondition, clusterv1.MachineSetScalingUpReason, clusterv1.MachineSetNotScalingUpReason,
		clusterv1.MachineSetScalingDownCondition, clusterv1.MachineSetScalingDownReason, clusterv1.MachineSetNotScalingDownReason)
	setCond(conds, gen, clusterv1.MachineSetRemediatingCondition, metav1.ConditionFalse, clusterv1.MachineSetNotRemediatingReason, "")
	if ms.DeletionTimestamp != nil {
		setCond(conds, gen, clusterv1.MachineSetDeletingCondition, metav1.ConditionTrue, clusterv1.MachineSetDeletingReason, fmt.Sprintf("Deleting %d Machines", total))
	} else {
		setCond(conds, gen, clusterv1.MachineSetDeletingCondition, metav1.ConditionFalse, clusterv1.MachineSetNotDeletingReason, "")
	}
	setCond(conds, gen, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")

	if st.Deprecated == nil {
		st.Deprecated = &clusterv1.MachineSetDeprecatedStatus{}
	}
	if st.Deprecated.V1Beta1 == nil {
		st.Deprecated.V1Beta1 = &clusterv1.MachineSetV1Beta1DeprecatedStatus{}
	}
	v1 := st.Deprecated.V1Beta1
	v1.FullyLabeledReplicas, v1.ReadyReplicas, v1.AvailableReplicas = total, ready, available
	v1beta1conditions.MarkTrue(ms, clusterv1.MachinesCreatedV1Beta1Condition)
	if total == desired && ready == total {
		v1beta1conditions.MarkTrue(ms, clusterv1.ResizedV1Beta1Condition)
	} else if total != desired {
		reason := clusterv1.ScalingUpV1Beta1Reason
		if total > desired {
			reason = clusterv1.ScalingDownV1Beta1Reason
		}
		v1beta1conditions.MarkFalse(ms, clusterv1.ResizedV1Beta1Condition, reason, clusterv1.ConditionSeverityWarning, "Scaling to %d replicas (actual %d)", desired, total)
	}
	getters := make([]v1beta1conditions.Getter, 0, len(machines))
	for _, m := range machines {
		getters = append(getters, m)
	}
	if len(getters) > 0 {
		v1beta1conditions.SetAggregate(ms, clusterv1.MachinesReadyV1Beta1Condition, getters, v1beta1conditions.AddSourceRef())
	} else {
		v1beta1conditions.MarkTrue(ms, clusterv1.MachinesReadyV1Beta1Condition)
	}
	v1beta1conditions.SetSummary(ms, v1beta1conditions.WithConditions(
		clusterv1.MachinesCreatedV1Beta1Condition, clusterv1.ResizedV1Beta1Condition, clusterv1.MachinesReadyV1Beta1Condition))
	st.ObservedGeneration = ms.Generation
}

func sortMachineSetsOldestFirst(sets []*clusterv1.MachineSet) {
	sort.SliceStable(sets, func(i, j int) bool {
		ti, tj := sets[i].CreationTimestamp, sets[j].CreationTimestamp
		if ti.Equal(&tj) {
			return sets[i].Name < sets[j].Name
		}
		return ti.Before(&tj)
	})
}
