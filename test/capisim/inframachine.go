package capisim

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// CAPO's OpenStackMachine condition types and reasons.
const (
	capoInstanceReady          = clusterv1.ConditionType("InstanceReady")
	capoAPIServerIngressReady  = clusterv1.ConditionType("APIServerIngressReadyCondition")
	capoWaitingForInfra        = "WaitingForClusterInfrastructure"
	capoWaitingForBootstrap    = "WaitingForBootstrapData"
	capoInstanceNotReadyReason = "InstanceNotReady"
)

// infraMachineReconciler plays CAPO's OpenStackMachine controller: a Nova
// server that builds for a step, then is ACTIVE with a fixed IP.
type infraMachineReconciler struct{ *Simulator }

func (r *infraMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *infraMachineReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	osm := newUnstructured(gvkOpenStackMachine)
	if err := r.client.Get(ctx, req.NamespacedName, osm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// CAPO waits for the Machine controller to make the Machine its owner.
	machineName, _ := ownerName(osm, "Machine")
	var machine *clusterv1.Machine
	if machineName != "" {
		machine = &clusterv1.Machine{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: osm.GetNamespace(), Name: machineName}, machine); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			machine = nil
		}
	}
	var cluster *clusterv1.Cluster
	if machine != nil {
		c, err := r.getCluster(ctx, osm.GetNamespace(), machine.Spec.ClusterName)
		if err != nil {
			return ctrl.Result{}, err
		}
		cluster = c
	}
	if osm.GetDeletionTimestamp() != nil {
		return r.reconcileDelete(ctx, osm, cluster)
	}
	if machine == nil || cluster == nil || deref(cluster.Spec.Paused, false) {
		return ctrl.Result{}, nil
	}
	original := osm.DeepCopy()
	conds := capoConditions{osm}
	if !deref(cluster.Status.Initialization.InfrastructureProvisioned, false) {
		v1beta1conditions.MarkFalse(conds, capoInstanceReady, capoWaitingForInfra, clusterv1.ConditionSeverityInfo, "")
		return after(r.opts.Step), r.patchStatus(ctx, osm, original)
	}
	if machine.Spec.Bootstrap.DataSecretName == nil {
		v1beta1conditions.MarkFalse(conds, capoInstanceReady, capoWaitingForBootstrap, clusterv1.ConditionSeverityInfo, "")
		return ctrl.Result{}, r.patchStatus(ctx, osm, original)
	}
	if added, err := r.addFinalizer(ctx, osm, openStackMachineFinalizer); err != nil || added {
		return ctrl.Result{}, err
	}
	if infraProvisioned(osm) {
		return ctrl.Result{}, nil
	}
	if d := r.pace.wait(osm.GetUID(), "provision"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(osm.GetUID(), "provision")

	state, _, _ := unstructured.NestedString(osm.Object, "status", "instanceState")
	if state == "" {
		// Nova accepted the server: it builds.
		_ = unstructured.SetNestedField(osm.Object, fakeUUID("server", string(osm.GetUID())), "status", "instanceID")
		_ = unstructured.SetNestedField(osm.Object, "BUILD", "status", "instanceState")
		_ = unstructured.SetNestedField(osm.Object, false, "status", "ready")
		v1beta1conditions.MarkFalse(conds, capoReady, capoInstanceNotReadyReason, clusterv1.ConditionSeverityInfo, "Instance is building")
		return after(r.opts.Step), r.patchStatus(ctx, osm, original)
	}
	if machine.Annotations[annotationReplacement] == "true" && r.faultsFor(cluster).StuckRollout {
		// The replacement never leaves BUILD; check again later in case
		// the fault is cleared.
		return after(2 * r.opts.Step), nil
	}
	return ctrl.Result{}, r.activate(ctx, cluster, machine, osm)
}

// activate is the server becoming ACTIVE: addresses, providerID, ready.
func (r *infraMachineReconciler) activate(ctx context.Context, cluster *clusterv1.Cluster, machine *clusterv1.Machine, osm *unstructured.Unstructured) error {
	cidr := defaultNodeCIDR
	osc := newUnstructured(gvkOpenStackCluster)
	if cluster.Spec.InfrastructureRef.IsDefined() {
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.InfrastructureRef.Name}, osc); err == nil {
			cidr = nodeCIDR(osc)
		}
	}
	ip, err := r.ips.fixedIP(clusterKey(cluster), cidr, osm.GetName())
	if err != nil {
		return err
	}
	instanceID, _, _ := unstructured.NestedString(osm.Object, "status", "instanceID")
	specOriginal := osm.DeepCopy()
	_ = unstructured.SetNestedField(osm.Object, "openstack:///"+instanceID, "spec", "providerID")
	if err := r.client.Patch(ctx, osm, client.MergeFrom(specOriginal)); err != nil {
		return err
	}
	original := osm.DeepCopy()
	_ = unstructured.SetNestedSlice(osm.Object, []any{
		map[string]any{"type": "InternalIP", "address": ip},
		map[string]any{"type": "InternalDNS", "address": osm.GetName()},
	}, "status", "addresses")
	_ = unstructured.SetNestedField(osm.Object, "ACTIVE", "status", "instanceState")
	_ = unstructured.SetNestedField(osm.Object, true, "status", "ready")
	_ = unstructured.SetNestedField(osm.Object, true, "status", "initialization", "provisioned")
	conds := capoConditions{osm}
	if _, cp := machine.Labels[clusterv1.MachineControlPlaneLabel]; cp {
		v1beta1conditions.MarkTrue(conds, capoAPIServerIngressReady)
	}
	v1beta1conditions.MarkTrue(conds, capoInstanceReady)
	v1beta1conditions.MarkTrue(conds, capoReady)
	return r.patchStatus(ctx, osm, original)
}

// reconcileDelete deletes the server (a step), frees its address and
// releases the finalizer.
func (r *infraMachineReconciler) reconcileDelete(ctx context.Context, osm *unstructured.Unstructured, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutilContains(osm.GetFinalizers(), openStackMachineFinalizer) {
		return ctrl.Result{}, nil
	}
	if d := r.pace.wait(osm.GetUID(), "delete"); d > 0 {
		return after(d), nil
	}
	if cluster != nil {
		r.ips.releaseFixedIP(clusterKey(cluster), osm.GetName())
	} else if name := osm.GetLabels()[clusterv1.ClusterNameLabel]; name != "" {
		r.ips.releaseFixedIP(osm.GetNamespace()+"/"+name, osm.GetName())
	}
	r.pace.forget(osm.GetUID())
	return ctrl.Result{}, r.removeFinalizer(ctx, osm, openStackMachineFinalizer)
}

// clusterKey identifies a cluster's subnet in the address allocator.
func clusterKey(c *clusterv1.Cluster) string { return c.Namespace + "/" + c.Name }
