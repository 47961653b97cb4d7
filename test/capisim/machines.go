package capisim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// machineReconciler plays CAPI's Machine controller, with the kubeadm
// bootstrap provider's part (bootstrap data) and the node the kubelet
// registers in the workload cluster.
type machineReconciler struct{ *Simulator }

// machineScope is what one reconcile of a Machine knows.
type machineScope struct {
	machine   *clusterv1.Machine
	cluster   *clusterv1.Cluster // nil when gone
	bootstrap *bootstrapv1.KubeadmConfig
	infra     *unstructured.Unstructured
	// outdated says why the Machine does not match its owner's spec.
	outdated []string
	// deletingReason and deletingMessage feed the Deleting condition.
	deletingReason, deletingMessage string
}

var gvkMachine = clusterv1.GroupVersion.WithKind("Machine")

func (r *machineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *machineReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &clusterv1.Machine{}
	if err := r.client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := r.getCluster(ctx, m.Namespace, m.Spec.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if m.DeletionTimestamp == nil {
		if cluster == nil {
			return after(r.opts.Step), nil
		}
		if deref(cluster.Spec.Paused, false) {
			return ctrl.Result{}, nil
		}
		if added, err := r.addFinalizer(ctx, m, clusterv1.MachineFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
	}
	s := &machineScope{machine: m, cluster: cluster}
	if err := r.load(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	original := m.DeepCopy()
	var res ctrl.Result
	if m.DeletionTimestamp != nil {
		if res, err = r.reconcileDelete(ctx, s); err != nil || !controllerutilContains(m.Finalizers, clusterv1.MachineFinalizer) {
			return res, err
		}
	} else if res, err = r.reconcileNormal(ctx, s); err != nil {
		return res, err
	}
	r.updateStatus(s)
	if !equality.Semantic.DeepEqual(original.Status, m.Status) {
		if err := r.patchStatus(ctx, m, original); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// load reads the Machine's bootstrap config and infrastructure machine and
// works out whether it is up to date with its owner.
func (r *machineReconciler) load(ctx context.Context, s *machineScope) error {
	m := s.machine
	kc := &bootstrapv1.KubeadmConfig{}
	switch err := r.client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.Bootstrap.ConfigRef.Name}, kc); {
	case err == nil:
		s.bootstrap = kc
	case !apierrors.IsNotFound(err):
		return err
	}
	osm := newUnstructured(gvkOpenStackMachine)
	switch err := r.client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, osm); {
	case err == nil:
		s.infra = osm
	case !apierrors.IsNotFound(err):
		return err
	}
	outdated, err := r.machineOutdated(ctx, m)
	if err != nil {
		return err
	}
	s.outdated = outdated
	return nil
}

// machineOutdated compares a Machine with its KubeadmControlPlane, or its
// MachineSet's template with the MachineDeployment's (CAPI's UpToDate).
func (r *machineReconciler) machineOutdated(ctx context.Context, m *clusterv1.Machine) ([]string, error) {
	owner := metav1.GetControllerOf(m)
	if owner == nil {
		return nil, nil
	}
	key := types.NamespacedName{Namespace: m.Namespace, Name: owner.Name}
	switch owner.Kind {
	case "KubeadmControlPlane":
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := r.client.Get(ctx, key, kcp); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return r.controlPlaneMachineOutdated(ctx, kcp, m), nil
	case "MachineSet":
		ms := &clusterv1.MachineSet{}
		if err := r.client.Get(ctx, key, ms); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		mdOwner := metav1.GetControllerOf(ms)
		if mdOwner == nil || mdOwner.Kind != "MachineDeployment" {
			return nil, nil
		}
		md := &clusterv1.MachineDeployment{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: mdOwner.Name}, md); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		return templateOutdated(&ms.Spec.Template, &md.Spec.Template), nil
	}
	return nil, nil
}

// reconcileNormal adopts the Machine's infrastructure and bootstrap
// objects, makes its bootstrap data, copies what the infrastructure
// reports, and registers its node.
func (r *machineReconciler) reconcileNormal(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.machine
	if s.bootstrap == nil || s.infra == nil {
		return after(r.opts.Step), nil
	}
	if err := r.adoptByMachine(ctx, m, s.bootstrap); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.adoptByMachine(ctx, m, s.infra); err != nil {
		return ctrl.Result{}, err
	}
	if !deref(s.bootstrap.Status.Initialization.DataSecretCreated, false) {
		if !r.mayBootstrap(ctx, s) {
			return after(r.opts.Step), nil
		}
		if d := r.pace.wait(m.UID, "provision"); d > 0 {
			return after(d), nil
		}
		r.pace.stepped(m.UID, "provision")
		return after(r.opts.Step), r.writeBootstrapData(ctx, s)
	}
	if m.Spec.Bootstrap.DataSecretName == nil {
		original := m.DeepCopy()
		m.Spec.Bootstrap.DataSecretName = ptrTo(s.bootstrap.Status.DataSecretName)
		if err := r.client.Patch(ctx, m, client.MergeFrom(original)); err != nil {
			return ctrl.Result{}, err
		}
	}
	m.Status.Initialization.BootstrapDataSecretCreated = ptrTo(true)

	if !infraProvisioned(s.infra) {
		return ctrl.Result{}, nil // the infrastructure machine's changes wake us
	}
	providerID, _, _ := unstructured.NestedString(s.infra.Object, "spec", "providerID")
	if providerID != "" && m.Spec.ProviderID != providerID {
		original := m.DeepCopy()
		m.Spec.ProviderID = providerID
		if err := r.client.Patch(ctx, m, client.MergeFrom(original)); err != nil {
			return ctrl.Result{}, err
		}
	}
	m.Status.Addresses = infraAddresses(s.infra)
	m.Status.Initialization.InfrastructureProvisioned = ptrTo(true)

	if !m.Status.NodeRef.IsDefined() {
		// The kubelet registers its node a step after the server is up.
		if d := r.pace.wait(m.UID, "node"); d > 0 {
			return after(d), nil
		}
		m.Status.NodeRef = clusterv1.MachineNodeReference{Name: m.Name}
		m.Status.NodeInfo = nodeInfo(m)
	}
	return ctrl.Result{}, nil
}

// adoptByMachine makes the Machine the controller of its infrastructure
// and bootstrap objects, as the Machine controller does, taking over from
// the control plane or MachineSet that created them.
func (r *machineReconciler) adoptByMachine(ctx context.Context, m *clusterv1.Machine, obj client.Object) error {
	_, err := r.ensureMeta(ctx, obj, func() bool {
		var refs []metav1.OwnerReference
		changed := false
		for _, ref := range obj.GetOwnerReferences() {
			if ref.Controller != nil && *ref.Controller && ref.UID != m.UID {
				changed = true
				continue
			}
			refs = append(refs, ref)
		}
		refs, added := withOwnerRef(refs, ownerRefTo(m, gvkMachine, true))
		obj.SetOwnerReferences(refs)
		labels := obj.GetLabels()
		if labels[clusterv1.ClusterNameLabel] != m.Spec.ClusterName {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[clusterv1.ClusterNameLabel] = m.Spec.ClusterName
			obj.SetLabels(labels)
			changed = true
		}
		return changed || added
	})
	return err
}

// mayBootstrap reports whether the kubeadm bootstrap provider would write
// the Machine's bootstrap data now: the first control-plane Machine once the
// infrastructure is ready (kubeadm init), every other Machine once the
// control plane is initialized (kubeadm join).
func (r *machineReconciler) mayBootstrap(ctx context.Context, s *machineScope) bool {
	c := s.cluster
	if !deref(c.Status.Initialization.InfrastructureProvisioned, false) {
		return false
	}
	if deref(c.Status.Initialization.ControlPlaneInitialized, false) {
		return true
	}
	_, isCP := s.machine.Labels[clusterv1.MachineControlPlaneLabel]
	if !isCP {
		return false
	}
	// Only KCP's first Machine runs kubeadm init; KCP creates no other
	// before the control plane is initialized.
	machines, err := r.machinesOwnedBy(ctx, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: s.machine.Namespace, UID: controllerUID(s.machine)}}, c.Name)
	return err == nil && len(machines) > 0 && machines[0].Name == s.machine.Name
}

func controllerUID(obj metav1.Object) types.UID {
	if c := metav1.GetControllerOf(obj); c != nil {
		return c.UID
	}
	return ""
}

// writeBootstrapData is the kubeadm bootstrap provider's work: the
// bootstrap data Secret (cloud-init) and the KubeadmConfig's status.
func (r *machineReconciler) writeBootstrapData(ctx context.Context, s *machineScope) error {
	kc := s.bootstrap
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: kc.Namespace, Name: kc.Name,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: s.machine.Spec.ClusterName},
			OwnerReferences: []metav1.OwnerReference{ownerRefTo(kc, bootstrapv1.GroupVersion.WithKind("KubeadmConfig"), true)},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{
			"value":  []byte("## template: jinja\n#cloud-config\n# written by the capisim Cluster API simulator\n"),
			"format": []byte("cloud-config"),
		},
	}
	if err := r.client.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bootstrap data of %s: %w", kc.Name, err)
	}
	original := kc.DeepCopy()
	kc.Status.DataSecretName = sec.Name
	kc.Status.Initialization.DataSecretCreated = ptrTo(true)
	setCond(&kc.Status.Conditions, kc.Generation, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigDataSecretAvailableReason, "")
	setCond(&kc.Status.Conditions, kc.Generation, bootstrapv1.KubeadmConfigCertificatesAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigCertificatesAvailableReason, "")
	setCond(&kc.Status.Conditions, kc.Generation, bootstrapv1.KubeadmConfigReadyCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigReadyReason, "")
	kc.Status.ObservedGeneration = kc.Generation
	return r.patchStatus(ctx, kc, original)
}

// infraAddresses copies the infrastructure machine's addresses.
func infraAddresses(osm *unstructured.Unstructured) clusterv1.MachineAddresses {
	raw, _, _ := unstructured.NestedSlice(osm.Object, "status", "addresses")
	var out clusterv1.MachineAddresses
	for _, a := range raw {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		addr, _ := m["address"].(string)
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(typ), Address: addr})
	}
	return out
}

// nodeInfo is what the kubelet of a Machine's node reports.
func nodeInfo(m *clusterv1.Machine) *corev1.NodeSystemInfo {
	return &corev1.NodeSystemInfo{
		MachineID:               strings.ReplaceAll(fakeUUID("machine-id", string(m.UID)), "-", ""),
		SystemUUID:              fakeUUID("system-uuid", string(m.UID)),
		BootID:                  fakeUUID("boot-id", string(m.UID)),
		KernelVersion:           "6.8.0-60-generic",
		OSImage:                 "Ubuntu 24.04.2 LTS",
		ContainerRuntimeVersion: "containerd://2.0.5",
		KubeletVersion:          m.Spec.Version,
		OperatingSystem:         "linux",
		Architecture:            "amd64",
	}
}

// reconcileDelete deletes a Machine as CAPI does: drain its node, delete
// its infrastructure machine and bootstrap config and wait for them, then
// release the finalizer.
func (r *machineReconciler) reconcileDelete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m := s.machine
	if m.Status.NodeRef.IsDefined() && m.Status.Deletion == nil {
		m.Status.Deletion = &clusterv1.MachineDeletionStatus{NodeDrainStartTime: metav1.Now()}
	}
	if d := r.pace.wait(m.UID, "delete"); d > 0 {
		if m.Status.Deletion != nil {
			s.deletingReason = clusterv1.MachineDeletingDrainingNodeReason
			s.deletingMessage = fmt.Sprintf("Drain not completed yet (started at %s)", m.Status.Deletion.NodeDrainStartTime.UTC().Format(time.RFC3339))
		} else {
			s.deletingReason = clusterv1.MachineDeletingWaitingForInfrastructureDeletionReason
			s.deletingMessage = fmt.Sprintf("Waiting for %s to be deleted", gvkOpenStackMachine.Kind)
		}
		return after(d), nil
	}
	if s.infra != nil {
		if err := r.deleteIfPresent(ctx, s.infra); err != nil {
			return ctrl.Result{}, err
		}
		s.deletingReason, s.deletingMessage = clusterv1.MachineDeletingWaitingForInfrastructureDeletionReason, fmt.Sprintf("Waiting for %s to be deleted", gvkOpenStackMachine.Kind)
		return after(r.opts.Step), nil
	}
	if s.bootstrap != nil {
		if err := r.deleteIfPresent(ctx, s.bootstrap); err != nil {
			return ctrl.Result{}, err
		}
		// The bootstrap data Secret is owned by the KubeadmConfig; the
		// garbage collector would take it.
		if name := s.bootstrap.Status.DataSecretName; name != "" {
			sec := &corev1.Secret{}
			if err := r.direct.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, sec); err == nil && ownedBy(sec, s.bootstrap.UID) {
				if err := client.IgnoreNotFound(r.direct.Delete(ctx, sec)); err != nil {
					return ctrl.Result{}, err
				}
			}
		}
		s.deletingReason, s.deletingMessage = clusterv1.MachineDeletingWaitingForBootstrapDeletionReason, "Waiting for KubeadmConfig to be deleted"
		return after(r.opts.Step), nil
	}
	r.pace.forget(m.UID)
	return ctrl.Result{}, r.removeFinalizer(ctx, m, clusterv1.MachineFinalizer)
}

// sortOldestFirst orders Machines by creation, then name.
func sortOldestFirst(ms []*clusterv1.Machine) {
	sort.SliceStable(ms, func(i, j int) bool {
		ti, tj := ms[i].CreationTimestamp, ms[j].CreationTimestamp
		if ti.Equal(&tj) {
			return ms[i].Name < ms[j].Name
		}
		return ti.Before(&tj)
	})
}
