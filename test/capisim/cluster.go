package capisim

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// clusterReconciler plays CAPI's Cluster controller.
type clusterReconciler struct{ *Simulator }

// clusterScope is what one reconcile of a Cluster knows.
type clusterScope struct {
	cluster        *clusterv1.Cluster
	infra          *unstructured.Unstructured // nil when absent
	infraNotFound  bool
	kcp            *controlplanev1.KubeadmControlPlane // nil when absent
	kcpNotFound    bool
	mds            []*clusterv1.MachineDeployment
	machineSets    []*clusterv1.MachineSet
	cpMachines     []*clusterv1.Machine
	workerMachines []*clusterv1.Machine
	// deletingReason and deletingMessage feed the Deleting condition.
	deletingReason, deletingMessage string
}

func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *clusterReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.DeletionTimestamp == nil {
		if added, err := r.addFinalizer(ctx, cluster, clusterv1.ClusterFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
	}
	// A new generation is noticed a step later, so that readers can see
	// observedGeneration lag behind as it does with the real controllers.
	if cluster.Generation != cluster.Status.ObservedGeneration {
		if d := r.pace.wait(cluster.UID, fmt.Sprintf("observe-%d", cluster.Generation)); d > 0 {
			return after(d), nil
		}
	}
	s := &clusterScope{cluster: cluster}
	if err := r.load(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	original := cluster.DeepCopy()
	var res ctrl.Result
	if cluster.DeletionTimestamp != nil {
		var err error
		if res, err = r.reconcileDelete(ctx, s); err != nil || !controllerutilContains(cluster.Finalizers, clusterv1.ClusterFinalizer) {
			return res, err
		}
	} else {
		if deref(cluster.Spec.Paused, false) {
			return ctrl.Result{}, nil
		}
		var err error
		if res, err = r.reconcileNormal(ctx, s); err != nil {
			return res, err
		}
	}
	r.updateStatus(s)
	if !equality.Semantic.DeepEqual(original.Status, cluster.Status) {
		if err := r.patchStatus(ctx, cluster, original); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// load reads the Cluster's infrastructure, control plane and descendants.
func (r *clusterReconciler) load(ctx context.Context, s *clusterScope) error {
	c := s.cluster
	if c.Spec.InfrastructureRef.IsDefined() {
		infra, err := r.getRef(ctx, c.Namespace, c.Spec.InfrastructureRef)
		switch {
		case apierrors.IsNotFound(err):
			s.infraNotFound = true
		case err != nil:
			return err
		default:
			s.infra = infra
		}
	}
	if c.Spec.ControlPlaneRef.IsDefined() {
		if c.Spec.ControlPlaneRef.Kind != "KubeadmControlPlane" {
			return fmt.Errorf("the simulator handles KubeadmControlPlane control planes, not %s", c.Spec.ControlPlaneRef.Kind)
		}
		kcp := &controlplanev1.KubeadmControlPlane{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.Spec.ControlPlaneRef.Name}, kcp)
		switch {
		case apierrors.IsNotFound(err):
			s.kcpNotFound = true
		case err != nil:
			return err
		default:
			s.kcp = kcp
		}
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.client.List(ctx, mds, client.InNamespace(c.Namespace)); err != nil {
		return err
	}
	for i := range mds.Items {
		if mds.Items[i].Spec.ClusterName == c.Name {
			s.mds = append(s.mds, &mds.Items[i])
		}
	}
	inCluster := client.MatchingLabels{clusterv1.ClusterNameLabel: c.Name}
	machineSets := &clusterv1.MachineSetList{}
	if err := r.client.List(ctx, machineSets, client.InNamespace(c.Namespace), inCluster); err != nil {
		return err
	}
	for i := range machineSets.Items {
		s.machineSets = append(s.machineSets, &machineSets.Items[i])
	}
	machines := &clusterv1.MachineList{}
	if err := r.client.List(ctx, machines, client.InNamespace(c.Namespace), inCluster); err != nil {
		return err
	}
	for i := range machines.Items {
		m := &machines.Items[i]
		if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
			s.cpMachines = append(s.cpMachines, m)
		} else {
			s.workerMachines = append(s.workerMachines, m)
		}
	}
	return nil
}

// reconcileNormal adopts the infrastructure and control plane, then copies
// what they report into the Cluster, as CAPI's cluster controller phases do.
func (r *clusterReconciler) reconcileNormal(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	c := s.cluster
	var res ctrl.Result
	if s.infra != nil {
		if err := r.adopt(ctx, c, s.infra); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.reconcileInfrastructure(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	} else if s.infraNotFound {
		res = after(r.opts.Step)
	}
	// The MachineHealthCheck controller makes the Cluster the owner of its
	// health checks; they go with it.
	mhcs := &clusterv1.MachineHealthCheckList{}
	if err := r.client.List(ctx, mhcs, client.InNamespace(c.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	for i := range mhcs.Items {
		if mhcs.Items[i].Spec.ClusterName == c.Name {
			if err := r.adopt(ctx, c, &mhcs.Items[i]); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if s.kcp != nil {
		if err := r.adopt(ctx, c, s.kcp); err != nil {
			return ctrl.Result{}, err
		}
		r.reconcileControlPlane(s)
	} else if s.kcpNotFound {
		res = after(r.opts.Step)
	}
	return res, nil
}

// adopt makes the Cluster an owner of obj and labels it with the cluster
// name, like CAPI's ensureOwnerRefAndLabel.
func (r *clusterReconciler) adopt(ctx context.Context, c *clusterv1.Cluster, obj client.Object) error {
	_, err := r.ensureMeta(ctx, obj, func() bool {
		refs, changed := withOwnerRef(obj.GetOwnerReferences(), ownerRefTo(c, gvkCluster, false))
		obj.SetOwnerReferences(refs)
		labels := obj.GetLabels()
		if labels[clusterv1.ClusterNameLabel] != c.Name {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[clusterv1.ClusterNameLabel] = c.Name
			obj.SetLabels(labels)
			changed = true
		}
		return changed
	})
	return err
}

// reconcileInfrastructure copies the endpoint and failure domains of a
// provisioned infrastructure cluster and its failures.
func (r *clusterReconciler) reconcileInfrastructure(ctx context.Context, s *clusterScope) error {
	c := s.cluster
	provisioned := infraProvisioned(s.infra)

	if reason, ok, _ := unstructured.NestedString(s.infra.Object, "status", "failureReason"); ok && reason != "" {
		deprecatedV1Beta1(c).FailureReason = ptrTo(capierrors.ClusterStatusError(reason))
	}
	if msg, ok, _ := unstructured.NestedString(s.infra.Object, "status", "failureMessage"); ok && msg != "" {
		deprecatedV1Beta1(c).FailureMessage = ptrTo(fmt.Sprintf("Failure detected from referenced resource %v with name %q: %s",
			s.infra.GroupVersionKind(), s.infra.GetName(), msg))
	}
	v1beta1conditions.SetMirror(c, clusterv1.InfrastructureReadyV1Beta1Condition, v1beta1conditions.UnstructuredGetter(s.infra),
		v1beta1conditions.WithFallbackValue(provisioned, clusterv1.WaitingForInfrastructureFallbackV1Beta1Reason, clusterv1.ConditionSeverityInfo, ""))

	if !provisioned || s.infra.GetDeletionTimestamp() != nil {
		return nil
	}
	if !c.Spec.ControlPlaneEndpoint.IsValid() {
		host, _, _ := unstructured.NestedString(s.infra.Object, "spec", "controlPlaneEndpoint", "host")
		port, _, _ := unstructured.NestedInt64(s.infra.Object, "spec", "controlPlaneEndpoint", "port")
		if host != "" && port > 0 {
			original := c.DeepCopy()
			c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: host, Port: int32(port)}
			if err := r.client.Patch(ctx, c, client.MergeFrom(original)); err != nil {
				return err
			}
		}
	}
	c.Status.FailureDomains = infraFailureDomains(s.infra)
	c.Status.Initialization.InfrastructureProvisioned = ptrTo(true)
	return nil
}

// infraProvisioned reads the provisioned flag of an infrastructure cluster
// under either contract (v1beta2: status.initialization.provisioned;
// v1beta1: status.ready).
func infraProvisioned(infra *unstructured.Unstructured) bool {
	if p, ok, _ := unstructured.NestedBool(infra.Object, "status", "initialization", "provisioned"); ok {
		return p
	}
	ready, _, _ := unstructured.NestedBool(infra.Object, "status", "ready")
	return ready
}

// infraFailureDomains turns the v1beta1-contract failure domain map of the
// infrastructure cluster into the Cluster's list.
func infraFailureDomains(infra *unstructured.Unstructured) []clusterv1.FailureDomain {
	fds, _, _ := unstructured.NestedMap(infra.Object, "status", "failureDomains")
	out := []clusterv1.FailureDomain{}
	for name, v := range fds {
		fd := clusterv1.FailureDomain{Name: name}
		if m, ok := v.(map[string]any); ok {
			if cp, ok := m["controlPlane"].(bool); ok {
				fd.ControlPlane = ptrTo(cp)
			}
		}
		out = append(out, fd)
	}
	return out
}

// reconcileControlPlane copies whether the control plane is initialized.
func (r *clusterReconciler) reconcileControlPlane(s *clusterScope) {
	c, kcp := s.cluster, s.kcp
	initialized := deref(kcp.Status.Initialization.ControlPlaneInitialized, false)
	v1beta1conditions.SetMirror(c, clusterv1.ControlPlaneReadyV1Beta1Condition, kcp,
		v1beta1conditions.WithFallbackValue(initialized, clusterv1.WaitingForControlPlaneFallbackV1Beta1Reason, clusterv1.ConditionSeverityInfo, ""))
	if kcp.DeletionTimestamp != nil {
		return
	}
	if !v1beta1conditions.IsTrue(c, clusterv1.ControlPlaneInitializedV1Beta1Condition) {
		if initialized {
			v1beta1conditions.MarkTrue(c, clusterv1.ControlPlaneInitializedV1Beta1Condition)
		} else {
			v1beta1conditions.MarkFalse(c, clusterv1.ControlPlaneInitializedV1Beta1Condition, clusterv1.WaitingForControlPlaneProviderInitializedV1Beta1Reason,
				clusterv1.ConditionSeverityInfo, "Waiting for control plane provider to indicate the control plane has been initialized")
		}
	}
	if initialized {
		c.Status.Initialization.ControlPlaneInitialized = ptrTo(true)
	}
}

func deprecatedV1Beta1(c *clusterv1.Cluster) *clusterv1.ClusterV1Beta1DeprecatedStatus {
	if c.Status.Deprecated == nil {
		c.Status.Deprecated = &clusterv1.ClusterDeprecatedStatus{}
	}
	if c.Status.Deprecated.V1Beta1 == nil {
		c.Status.Deprecated.V1Beta1 = &clusterv1.ClusterV1Beta1DeprecatedStatus{}
	}
	return c.Status.Deprecated.V1Beta1
}

func controllerutilContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
