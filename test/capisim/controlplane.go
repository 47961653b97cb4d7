package capisim

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// controlPlaneReconciler plays the kubeadm control plane (KCP) controller.
type controlPlaneReconciler struct{ *Simulator }

// controlPlaneScope is what one reconcile of a KubeadmControlPlane knows.
type controlPlaneScope struct {
	kcp      *controlplanev1.KubeadmControlPlane
	cluster  *clusterv1.Cluster
	machines []*clusterv1.Machine
	// upToDate says, per Machine name, whether it matches the spec, and
	// why not.
	upToDate map[string][]string
	// certificates: the cluster CA Secrets exist.
	certificates bool
	// waitingForWorkers: deleting, but workers still exist.
	waitingForWorkers bool
	// waitingFor says what KCP waits for before it can create Machines.
	waitingFor string
}

func (r *controlPlaneReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *controlPlaneReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	kcp := &controlplanev1.KubeadmControlPlane{}
	if err := r.client.Get(ctx, req.NamespacedName, kcp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// KCP waits for the Cluster controller to make the Cluster its owner.
	clusterName, _ := ownerName(kcp, "Cluster")
	if clusterName == "" {
		return ctrl.Result{}, nil
	}
	cluster, err := r.getCluster(ctx, kcp.Namespace, clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil && kcp.DeletionTimestamp == nil {
		return after(r.opts.Step), nil
	}
	if kcp.DeletionTimestamp == nil {
		if deref(cluster.Spec.Paused, false) {
			return ctrl.Result{}, nil
		}
		if added, err := r.addFinalizer(ctx, kcp, controlplanev1.KubeadmControlPlaneFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
		if kcp.Generation != kcp.Status.ObservedGeneration {
			if d := r.pace.wait(kcp.UID, fmt.Sprintf("observe-%d", kcp.Generation)); d > 0 {
				return after(d), nil
			}
		}
	}
	machines, err := r.machinesOwnedBy(ctx, kcp, clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	s := &controlPlaneScope{kcp: kcp, cluster: cluster, machines: machines, upToDate: map[string][]string{}}
	for _, m := range machines {
		s.upToDate[m.Name] = r.controlPlaneMachineOutdated(ctx, kcp, m)
	}
	original := kcp.DeepCopy()
	var res ctrl.Result
	if kcp.DeletionTimestamp != nil {
		if res, err = r.reconcileDelete(ctx, s); err != nil || !controllerutilContains(kcp.Finalizers, controlplanev1.KubeadmControlPlaneFinalizer) {
			return res, err
		}
	} else if res, err = r.reconcileNormal(ctx, s); err != nil {
		return res, err
	}
	r.updateStatus(s)
	if !equality.Semantic.DeepEqual(original.Status, kcp.Status) {
		if err := r.patchStatus(ctx, kcp, original); err != nil {
			return ctrl.Result{}, err
		}
	}
	return res, nil
}

// reconcileNormal waits for the infrastructure, sets up the certificates
// and kubeconfig, then scales or rolls the Machines one at a time.
func (r *controlPlaneReconciler) reconcileNormal(ctx context.Context, s *controlPlaneScope) (ctrl.Result, error) {
	kcp, cluster := s.kcp, s.cluster
	// KCP adopts its machine template first thing, then waits for the
	// infrastructure, makes the certificates, and waits for the endpoint.
	if err := r.adoptTemplate(ctx, cluster, kcp.Spec.MachineTemplate.Spec.InfrastructureRef, kcp.Namespace); err != nil {
		return ctrl.Result{}, err
	}
	if !deref(cluster.Status.Initialization.InfrastructureProvisioned, false) {
		s.waitingFor = "Waiting for Cluster status.infrastructureReady to be true"
		return after(r.opts.Step), nil
	}
	if err := r.ensureCertificates(ctx, cluster, kcp); err != nil {
		return ctrl.Result{}, err
	}
	s.certificates = true
	if !cluster.Spec.ControlPlaneEndpoint.IsValid() {
		s.waitingFor = "Waiting for Cluster spec.controlPlaneEndpoint to be set"
		return after(r.opts.Step), nil
	}
	if err := r.ensureKubeconfig(ctx, cluster, kcp); err != nil {
		return ctrl.Result{}, err
	}
	if !r.machinesSettled(kcp, s.machines) {
		return after(r.opts.Step / 4), nil
	}
	return r.scale(ctx, s)
}

// scale takes at most one step towards the desired Machines, like KCP:
// create the first Machine; once initialized, add Machines one at a time
// while all are healthy; roll out-of-date Machines by creating a new one
// first (maxSurge 1) and then deleting the oldest out-of-date one.
func (r *controlPlaneReconciler) scale(ctx context.Context, s *controlPlaneScope) (ctrl.Result, error) {
	kcp := s.kcp
	desired := int(deref(kcp.Spec.Replicas, 1))
	var outdated, current []*clusterv1.Machine
	allReady := true
	for _, m := range s.machines {
		if m.DeletionTimestamp != nil {
			// KCP waits for a deletion to finish before anything else.
			return after(r.opts.Step), nil
		}
		if len(s.upToDate[m.Name]) > 0 {
			outdated = append(outdated, m)
		} else {
			current = append(current, m)
		}
		if !condIsTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			allReady = false
		}
	}
	initialized := deref(kcp.Status.Initialization.ControlPlaneInitialized, false)
	var act func() error
	switch {
	case len(s.machines) == 0:
		act = func() error { return r.createControlPlaneMachine(ctx, s, false) }
	case !initialized || !allReady:
		// Wait: for kubeadm init, or for every Machine to be healthy
		// (KCP's preflight checks) before scaling or rolling further.
		return after(r.opts.Step), nil
	case len(s.machines) < desired:
		act = func() error { return r.createControlPlaneMachine(ctx, s, false) }
	case len(outdated) > 0 && len(s.machines) <= desired:
		act = func() error { return r.createControlPlaneMachine(ctx, s, true) }
	case len(outdated) > 0:
		act = func() error { return r.deleteMachine(ctx, kcp, outdated[0]) }
	case len(s.machines) > desired:
		act = func() error { return r.deleteMachine(ctx, kcp, current[0]) }
	default:
		return ctrl.Result{}, nil
	}
	if d := r.pace.wait(kcp.UID, "scale"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(kcp.UID, "scale")
	return after(r.opts.Step), act()
}

func (r *controlPlaneReconciler) createControlPlaneMachine(ctx context.Context, s *controlPlaneScope, replacement bool) error {
	kcp := s.kcp
	labels := map[string]string{}
	for k, v := range kcp.Spec.MachineTemplate.ObjectMeta.Labels {
		labels[k] = v
	}
	labels[clusterv1.MachineControlPlaneLabel] = ""
	labels[clusterv1.MachineControlPlaneNameLabel] = kcp.Name
	annotations := map[string]string{}
	for k, v := range kcp.Spec.MachineTemplate.ObjectMeta.Annotations {
		annotations[k] = v
	}
	annotations[annotationKubeadmConfigHash] = kubeadmConfigHash(kcp)
	if replacement {
		annotations[annotationReplacement] = "true"
	}
	m, err := r.createMachine(ctx, machinePlan{
		owner: kcp, ownerGVK: gvkKCP, clusterName: s.cluster.Name, namePrefix: kcp.Name,
		labels: labels, annotations: annotations,
		spec: clusterv1.MachineSpec{
			Version:        kcp.Spec.Version,
			ReadinessGates: kcp.Spec.MachineTemplate.Spec.ReadinessGates,
		},
		infraTemplate: kcp.Spec.MachineTemplate.Spec.InfrastructureRef,
		bootstrapSpec: &kcp.Spec.KubeadmConfigSpec,
	})
	if err != nil {
		return err
	}
	r.expect.expectCreated(kcp.UID, m.Name)
	return nil
}

func (r *Simulator) deleteMachine(ctx context.Context, owner client.Object, m *clusterv1.Machine) error {
	if err := r.deleteIfPresent(ctx, m); err != nil {
		return err
	}
	r.expect.expectDeleted(owner.GetUID(), m.Name)
	return nil
}

// kubeadmConfigHash digests the control plane's kubeadm configuration, to
// tell which Machines were made from an older one.
func kubeadmConfigHash(kcp *controlplanev1.KubeadmControlPlane) string {
	b, err := json.Marshal(kcp.Spec.KubeadmConfigSpec)
	if err != nil {
		return ""
	}
	return shortHash(string(b))
}

// controlPlaneMachineOutdated returns why a control-plane Machine does not
// match its KubeadmControlPlane (nothing when it does), in KCP's words.
func (s *Simulator) controlPlaneMachineOutdated(ctx context.Context, kcp *controlplanev1.KubeadmControlPlane, m *clusterv1.Machine) []string {
	var why []string
	if m.Spec.Version != kcp.Spec.Version {
		why = append(why, fmt.Sprintf("Version %s, %s required", m.Spec.Version, kcp.Spec.Version))
	}
	osm := newUnstructured(gvkOpenStackMachine)
	if err := s.client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, osm); err == nil {
		if osm.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation] != kcp.Spec.MachineTemplate.Spec.InfrastructureRef.Name {
			why = append(why, fmt.Sprintf("%s is not up-to-date", gvkOpenStackMachine.Kind))
		}
	}
	if h, ok := m.Annotations[annotationKubeadmConfigHash]; ok && h != kubeadmConfigHash(kcp) {
		why = append(why, "KubeadmConfig is not up-to-date")
	}
	return why
}

// adoptTemplate makes the Cluster an owner of a machine template, as KCP
// and the MachineDeployment controller do, so that the template goes with
// the Cluster.
func (s *Simulator) adoptTemplate(ctx context.Context, cluster *clusterv1.Cluster, ref clusterv1.ContractVersionedObjectReference, namespace string) error {
	if !ref.IsDefined() {
		return nil
	}
	tmpl, err := s.getRef(ctx, namespace, ref)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	_, err = s.ensureMeta(ctx, tmpl, func() bool {
		refs, changed := withOwnerRef(tmpl.GetOwnerReferences(), ownerRefTo(cluster, gvkCluster, false))
		tmpl.SetOwnerReferences(refs)
		return changed
	})
	return err
}

// reconcileDelete deletes the control-plane Machines once no worker is
// left, then hands what the control plane owns (kubeconfig, CA Secrets) to
// the garbage collector and releases the finalizer.
func (r *controlPlaneReconciler) reconcileDelete(ctx context.Context, s *controlPlaneScope) (ctrl.Result, error) {
	kcp := s.kcp
	if s.cluster != nil {
		workers := &clusterv1.MachineList{}
		if err := r.client.List(ctx, workers, client.InNamespace(kcp.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
			return ctrl.Result{}, err
		}
		for i := range workers.Items {
			if _, cp := workers.Items[i].Labels[clusterv1.MachineControlPlaneLabel]; !cp {
				s.waitingForWorkers = true
				return after(r.opts.Step), nil
			}
		}
	}
	if len(s.machines) > 0 {
		for _, m := range s.machines {
			if err := r.deleteMachine(ctx, kcp, m); err != nil {
				return ctrl.Result{}, err
			}
		}
		return after(r.opts.Step), nil
	}
	clusterName, _ := ownerName(kcp, "Cluster")
	if err := r.collectGarbage(ctx, kcp, clusterName); err != nil {
		return ctrl.Result{}, err
	}
	r.pace.forget(kcp.UID)
	r.expect.forget(kcp.UID)
	r.certsDone.Delete(kcp.UID)
	r.kubeconfigDone.Delete(kcp.UID)
	return ctrl.Result{}, r.removeFinalizer(ctx, kcp, controlplanev1.KubeadmControlPlaneFinalizer)
}
