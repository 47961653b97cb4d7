package capicontrollers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// openStackMachineReconciler plays CAPO v0.14's OpenStackMachine controller
// (controllers/openstackmachine_controller.go): it waits for the cluster's
// infrastructure and the bootstrap data, creates an OpenStackServer, and
// once the server is ready reports addresses, the provider ID and
// readiness, and boots the server into the cluster's in-memory workload
// cluster. A server gone from Nova is CAPO's terminal failure.
type openStackMachineReconciler struct{ *Provider }

func (r *openStackMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *openStackMachineReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	osm := newUnstructured(gvkOpenStackMachine)
	if err := r.client.Get(ctx, req.NamespacedName, osm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// CAPO waits for the Machine controller to make the Machine its owner.
	machine := &clusterv1.Machine{}
	if name := ownerName(osm, "Machine"); name == "" {
		machine = nil
	} else if err := r.client.Get(ctx, types.NamespacedName{Namespace: osm.GetNamespace(), Name: name}, machine); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		machine = nil
	}
	clusterName := osm.GetLabels()[clusterv1.ClusterNameLabel]
	if machine != nil {
		clusterName = machine.Spec.ClusterName
	}
	cluster, err := r.getCluster(ctx, osm.GetNamespace(), clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if osm.GetDeletionTimestamp() != nil {
		return r.reconcileDelete(ctx, osm, cluster, machine)
	}
	if machine == nil || cluster == nil || annotations.IsPaused(cluster, osm) {
		return ctrl.Result{}, nil
	}
	// In an error state CAPO does nothing more.
	if nestedString(osm, "status", "failureReason") != "" {
		return ctrl.Result{}, nil
	}
	osc := newUnstructured(gvkOpenStackCluster)
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.InfrastructureRef.Name}, osc); err != nil {
		return ctrl.Result{}, err
	}
	original := osm.DeepCopy()
	conds := capoConditions{osm}
	controlPlane := util.IsControlPlaneMachine(machine)
	patch := func() error { return r.patchStatus(ctx, summarize(osm, controlPlane), original) }
	if !nestedBool(osc, "status", "ready") {
		v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonWaitingForInfra, clusterv1.ConditionSeverityInfo, "")
		return ctrl.Result{}, patch()
	}
	if machine.Spec.Bootstrap.DataSecretName == nil {
		v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonWaitingForBootstrap, clusterv1.ConditionSeverityInfo, "")
		return ctrl.Result{}, patch()
	}
	if added, err := r.addFinalizer(ctx, osm, openStackMachineFinalizer); err != nil || added {
		return ctrl.Result{}, err
	}
	// Until its OpenStackServer is ready (ACTIVE) CAPO only waits: what
	// Nova said (a refused create, ERROR) is on the OpenStackServer, and
	// the OpenStackMachine keeps its earlier conditions.
	oss, err := r.ensureServer(ctx, osc, osm, machine)
	if err != nil || !nestedBool(oss, "status", "ready") {
		return ctrl.Result{}, err
	}
	id := nestedString(oss, "status", "instanceID")
	key := clusterKey(cluster.Namespace, cluster.Name)
	lost := r.nova.isLost(id)
	if !lost && machine.Status.NodeRef.IsDefined() && globMatch(r.faultsFor(cluster).ServerLost, osm.GetName()) {
		// The server vanishes from Nova; the cloud controller manager then
		// deletes its Node.
		r.nova.markLost(id)
		lost = true
		if err := r.shutdown(ctx, key, osm.GetName(), controlPlane); err != nil {
			return ctrl.Result{}, err
		}
	}
	if lost {
		v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonInstanceDeleted, clusterv1.ConditionSeverityError, serverUnexpectedlyDeletedMsg)
		_ = unstructured.SetNestedField(osm.Object, capoUpdateError, "status", "failureReason")
		_ = unstructured.SetNestedField(osm.Object, serverUnexpectedlyDeletedMsg, "status", "failureMessage")
		return ctrl.Result{}, patch()
	}

	addresses, _, _ := unstructured.NestedSlice(oss.Object, "status", "addresses")
	addresses = append(addresses, map[string]any{"type": string(corev1.NodeInternalDNS), "address": osm.GetName()})
	_ = unstructured.SetNestedSlice(osm.Object, addresses, "status", "addresses")
	if controlPlane {
		v1beta1conditions.MarkTrue(conds, condAPIServerIngress)
	}
	switch nestedString(oss, "status", "instanceState") {
	case stateActive:
		providerID := "openstack:///" + id
		if nestedString(osm, "spec", "providerID") != providerID {
			specOriginal := osm.DeepCopy()
			_ = unstructured.SetNestedField(osm.Object, providerID, "spec", "providerID")
			if err := r.client.Patch(ctx, osm, client.MergeFrom(specOriginal)); err != nil {
				return ctrl.Result{}, err
			}
			original = osm.DeepCopy()
			_ = unstructured.SetNestedSlice(osm.Object, addresses, "status", "addresses")
		}
		_ = unstructured.SetNestedField(osm.Object, id, "status", "instanceID")
		_ = unstructured.SetNestedField(osm.Object, stateActive, "status", "instanceState")
		_ = unstructured.SetNestedField(osm.Object, true, "status", "ready")
		_ = unstructured.SetNestedField(osm.Object, true, "status", "initialization", "provisioned")
		v1beta1conditions.MarkTrue(conds, condInstanceReady)
		if err := patch(); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.boot(ctx, bootSpec{
			cluster: key, namespace: cluster.Namespace, clusterName: cluster.Name,
			node: osm.GetName(), providerID: providerID, kubeletVersion: r.kubeletVersion(cluster, machine),
			controlPlane: controlPlane, addresses: nodeAddresses(addresses),
		})
	case stateError:
		// A server that ran before may recover; one that never ran is
		// more likely misconfigured, and CAPO gives up on it.
		if !machine.Status.NodeRef.IsDefined() {
			_ = unstructured.SetNestedField(osm.Object, capoUpdateError, "status", "failureReason")
			_ = unstructured.SetNestedField(osm.Object, `instance state ERROR is unexpected`, "status", "failureMessage")
		}
		v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonInstanceStateError, clusterv1.ConditionSeverityError, "")
	}
	return ctrl.Result{}, patch()
}

// summarize sets Ready as CAPO's patchMachine does before every write: the
// summary of InstanceReady (and, on a control plane machine,
// APIServerIngressReady), which replaces whatever Ready was marked.
func summarize(osm *unstructured.Unstructured, controlPlane bool) *unstructured.Unstructured {
	applicable := []clusterv1.ConditionType{condInstanceReady}
	if controlPlane {
		applicable = append(applicable, condAPIServerIngress)
	}
	v1beta1conditions.SetSummary(capoConditions{osm}, v1beta1conditions.WithConditions(applicable...))
	return osm
}

// kubeletVersion is what the machine's kubelet reports: its spec.version,
// unless the image's kubelet differs (the kubeletVersion fault).
func (p *Provider) kubeletVersion(cluster *clusterv1.Cluster, machine *clusterv1.Machine) string {
	if v := p.faultsFor(cluster).KubeletVersion; v != "" {
		return v
	}
	return machine.Spec.Version
}

func nodeAddresses(addresses []any) []corev1.NodeAddress {
	var out []corev1.NodeAddress
	for _, a := range addresses {
		if m, ok := a.(map[string]any); ok {
			t, _ := m["type"].(string)
			addr, _ := m["address"].(string)
			out = append(out, corev1.NodeAddress{Type: corev1.NodeAddressType(t), Address: addr})
		}
	}
	return out
}

// ensureServer gets or creates the machine's OpenStackServer, whose spec
// CAPO derives from the OpenStackMachine's (and the cluster's identity).
func (r *openStackMachineReconciler) ensureServer(ctx context.Context, osc, osm *unstructured.Unstructured, machine *clusterv1.Machine) (*unstructured.Unstructured, error) {
	oss := newUnstructured(gvkOpenStackServer)
	err := r.client.Get(ctx, client.ObjectKeyFromObject(osm), oss)
	if !apierrors.IsNotFound(err) {
		return oss, err
	}
	spec := map[string]any{}
	osmSpec, _, _ := unstructured.NestedMap(osm.Object, "spec")
	for _, k := range []string{"additionalBlockDevices", "configDrive", "flavor", "flavorID", "identityRef", "image", "ports",
		"rootVolume", "schedulerHintAdditionalProperties", "securityGroups", "serverGroup", "serverMetadata", "sshKeyName", "tags", "trunk"} {
		if v, ok := osmSpec[k]; ok {
			spec[k] = v
		}
	}
	if _, ok := spec["identityRef"]; !ok {
		identity, _, _ := unstructured.NestedMap(osc.Object, "spec", "identityRef")
		spec["identityRef"] = identity
	}
	if _, ok := spec["ports"]; !ok {
		spec["ports"] = []any{map[string]any{}}
	}
	if _, ok := spec["sshKeyName"]; !ok {
		spec["sshKeyName"] = ""
	}
	if machine.Spec.FailureDomain != "" {
		spec["availabilityZone"] = machine.Spec.FailureDomain
	}
	spec["userDataRef"] = map[string]any{"name": *machine.Spec.Bootstrap.DataSecretName}
	oss.SetNamespace(osm.GetNamespace())
	oss.SetName(osm.GetName())
	oss.SetLabels(map[string]string{clusterv1.ClusterNameLabel: machine.Spec.ClusterName})
	oss.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: osm.GetAPIVersion(), Kind: osm.GetKind(), Name: osm.GetName(), UID: osm.GetUID()}})
	if err := unstructured.SetNestedMap(oss.Object, spec, "spec"); err != nil {
		return nil, err
	}
	return oss, r.client.Create(ctx, oss)
}

// reconcileDelete shuts the server down in the workload cluster, deletes
// its OpenStackServer and releases the finalizer once the server is gone.
func (r *openStackMachineReconciler) reconcileDelete(ctx context.Context, osm *unstructured.Unstructured, cluster *clusterv1.Cluster, machine *clusterv1.Machine) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(osm, openStackMachineFinalizer) {
		return ctrl.Result{}, nil
	}
	clusterName := osm.GetLabels()[clusterv1.ClusterNameLabel]
	if cluster != nil {
		clusterName = cluster.Name
	}
	key := clusterKey(osm.GetNamespace(), clusterName)
	controlPlane := machine != nil && util.IsControlPlaneMachine(machine)
	if _, ok := osm.GetLabels()[clusterv1.MachineControlPlaneLabel]; ok {
		controlPlane = true
	}
	if err := r.shutdown(ctx, key, osm.GetName(), controlPlane); err != nil {
		return ctrl.Result{}, err
	}
	oss := newUnstructured(gvkOpenStackServer)
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(osm), oss); err == nil {
		if oss.GetDeletionTimestamp() == nil {
			if err := r.client.Delete(ctx, oss); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
		return after(r.opts.Step), nil
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	r.ips.releaseFixedIP(key, osm.GetName())
	return ctrl.Result{}, r.removeFinalizer(ctx, osm, openStackMachineFinalizer)
}
