package capicontrollers

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// Nova server states CAPO distinguishes.
const (
	stateBuild  = "BUILD"
	stateActive = "ACTIVE"
	stateError  = "ERROR"
)

// nova is the little Nova keeps that objects cannot: which servers were
// deleted behind CAPO's back (the server-lost fault).
type nova struct {
	mu   sync.Mutex
	lost map[string]bool // instance ID → gone
}

func (n *nova) markLost(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lost == nil {
		n.lost = map[string]bool{}
	}
	n.lost[id] = true
}

func (n *nova) isLost(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lost[id]
}

func (n *nova) forget(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.lost, id)
}

// openStackServerReconciler plays CAPO v0.14's OpenStackServer controller
// (controllers/openstackserver_controller.go), where Nova's answers land:
// a refused create (InstanceCreateFailed, e.g. quota) is retried; a server
// builds, then is ACTIVE (ready) or ERROR; one deleted behind CAPO's back is
// InstanceNotFound. The OpenStackMachine only learns of the server once it
// is ready.
type openStackServerReconciler struct{ *Provider }

func (r *openStackServerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *openStackServerReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	oss := newUnstructured(gvkOpenStackServer)
	if err := r.client.Get(ctx, req.NamespacedName, oss); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	id := nestedString(oss, "status", "instanceID")
	if oss.GetDeletionTimestamp() != nil {
		if !controllerutil.ContainsFinalizer(oss, openStackServerFinalizer) {
			return ctrl.Result{}, nil
		}
		// Nova deletes the server (and its ports) in a step.
		if d := r.pace.wait(oss.GetUID(), "delete"); d > 0 {
			return after(d), nil
		}
		r.pace.forget(oss.GetUID())
		r.nova.forget(id)
		return ctrl.Result{}, r.removeFinalizer(ctx, oss, openStackServerFinalizer)
	}
	if added, err := r.addFinalizer(ctx, oss, openStackServerFinalizer); err != nil || added {
		return after(r.opts.Step / 4), err
	}
	cluster, err := r.getCluster(ctx, oss.GetNamespace(), oss.GetLabels()[clusterv1.ClusterNameLabel])
	if err != nil || cluster == nil {
		return after(r.opts.Step), err
	}
	faults := r.faultsFor(cluster)
	original := oss.DeepCopy()
	conds := capoConditions{oss}

	if id == "" {
		if faults.ServerQuota {
			v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonInstanceCreateFailed, clusterv1.ConditionSeverityError, "%s", serverQuotaError)
			_ = unstructured.SetNestedField(oss.Object, stateError, "status", "instanceState")
			// CAPO returns the error and is retried with back-off.
			return after(2 * r.opts.Step), r.patchStatus(ctx, oss, original)
		}
		ip, err := r.ips.fixedIP(clusterKey(cluster.Namespace, cluster.Name), r.subnetOf(ctx, cluster), oss.GetName())
		if err != nil {
			return ctrl.Result{}, err
		}
		id = fakeUUID("server", string(oss.GetUID()))
		_ = unstructured.SetNestedField(oss.Object, id, "status", "instanceID")
		_ = unstructured.SetNestedField(oss.Object, stateBuild, "status", "instanceState")
		_ = unstructured.SetNestedSlice(oss.Object, []any{map[string]any{"type": string(corev1.NodeInternalIP), "address": ip}}, "status", "addresses")
		r.pace.schedule(oss.GetUID(), "build", r.buildTime(faults))
		return after(r.buildTime(faults)), r.patchStatus(ctx, oss, original)
	}
	if r.nova.isLost(id) {
		v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonInstanceNotFound, clusterv1.ConditionSeverityError, "%s", serverUnexpectedlyDeletedMsg)
		return ctrl.Result{}, r.patchStatus(ctx, oss, original)
	}
	switch nestedString(oss, "status", "instanceState") {
	case stateBuild:
		if d := r.pace.due(oss.GetUID(), "build"); d > 0 {
			return after(d), nil
		}
		if faults.StuckRollout && r.isReplacement(ctx, oss) {
			// Never leaves BUILD; look again in case the fault is cleared.
			return after(2 * r.opts.Step), nil
		}
		if globMatch(faults.ServerError, oss.GetName()) {
			_ = unstructured.SetNestedField(oss.Object, stateError, "status", "instanceState")
			v1beta1conditions.MarkFalse(conds, condInstanceReady, reasonInstanceStateError, clusterv1.ConditionSeverityError, "")
			return ctrl.Result{}, r.patchStatus(ctx, oss, original)
		}
		_ = unstructured.SetNestedField(oss.Object, stateActive, "status", "instanceState")
		_ = unstructured.SetNestedField(oss.Object, true, "status", "ready")
		v1beta1conditions.MarkTrue(conds, condInstanceReady)
		return ctrl.Result{}, r.patchStatus(ctx, oss, original)
	case stateError:
		// A create refused earlier (the quota was freed since): try again.
		unstructured.RemoveNestedField(oss.Object, "status", "instanceState")
		return after(r.opts.Step), r.patchStatus(ctx, oss, original)
	}
	return ctrl.Result{}, nil
}

// buildTime is how long a server stays BUILD.
func (r *openStackServerReconciler) buildTime(f Faults) time.Duration {
	if f.BootDelay.Duration > 0 {
		return f.BootDelay.Duration
	}
	return r.opts.Step
}

// subnetOf is the CIDR the cluster's servers get addresses from.
func (p *Provider) subnetOf(ctx context.Context, cluster *clusterv1.Cluster) string {
	osc := newUnstructured(gvkOpenStackCluster)
	if err := p.client.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.InfrastructureRef.Name}, osc); err != nil {
		return defaultNodeCIDR
	}
	return nodeCIDR(osc)
}

// isReplacement reports whether the server's machine was cloned from a
// machine template newer than the first one of its node group (or of the
// control plane): a rolling update's replacement, for the stuck-rollout
// fault.
func (p *Provider) isReplacement(ctx context.Context, oss *unstructured.Unstructured) bool {
	osm := newUnstructured(gvkOpenStackMachine)
	if err := p.client.Get(ctx, types.NamespacedName{Namespace: oss.GetNamespace(), Name: oss.GetName()}, osm); err != nil {
		return false
	}
	templateName := osm.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation]
	template := newUnstructured(gvkOpenStackMachineTemplate)
	if err := p.client.Get(ctx, types.NamespacedName{Namespace: oss.GetNamespace(), Name: templateName}, template); err != nil {
		return false
	}
	same := client.MatchingLabels{}
	for _, k := range []string{"capi.stackhpc.com/cluster", "capi.stackhpc.com/component", "capi.stackhpc.com/node-group"} {
		if v, ok := template.GetLabels()[k]; ok {
			same[k] = v
		}
	}
	if len(same) == 0 {
		return false
	}
	list := newUnstructuredList(gvkOpenStackMachineTemplate)
	if err := p.client.List(ctx, list, client.InNamespace(oss.GetNamespace()), same); err != nil {
		return false
	}
	oldest := template
	for i := range list.Items {
		t := &list.Items[i]
		if created, first := t.GetCreationTimestamp(), oldest.GetCreationTimestamp(); created.Before(&first) {
			oldest = t
		}
	}
	return oldest.GetName() != template.GetName()
}
