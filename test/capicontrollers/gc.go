package capicontrollers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The test bed runs no kube-controller-manager, hence no garbage collector,
// and Cluster API leaves some objects to it: machine templates and health
// checks owned by the Cluster, Secrets owned by the control plane or a
// bootstrap config, addons owned by the Cluster. garbageCollector does what
// the collector would (background deletion, as kubectl and Helm ask for):
// when an owner goes, it deletes, in that namespace, every object of the
// kinds below whose owners are all gone.

// ownerKinds are the kinds whose deletion can leave garbage.
var ownerKinds = []client.Object{
	&clusterv1.Cluster{}, &controlplanev1.KubeadmControlPlane{}, &clusterv1.MachineDeployment{},
	&clusterv1.MachineSet{}, &clusterv1.Machine{}, &bootstrapv1.KubeadmConfig{},
}

// dependentKinds are the kinds the collector deletes.
var dependentKinds = []schema.GroupVersionKind{
	gvkOpenStackMachineTemplate, gvkOpenStackMachine, gvkOpenStackServer, gvkHelmRelease, gvkManifests,
	bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate"),
	bootstrapv1.GroupVersion.WithKind("KubeadmConfig"),
	clusterv1.GroupVersion.WithKind("MachineHealthCheck"),
	clusterv1.GroupVersion.WithKind("MachineSet"),
	clusterv1.GroupVersion.WithKind("Machine"),
}

type garbageCollector struct {
	// direct lists and reads from the API server: deletions are rare, and
	// the manager's cache may not hold every kind.
	direct client.Client
}

// setupGC sweeps a namespace after each deletion of an owner kind in it.
func setupGC(mgr manager.Manager, direct client.Client) error {
	onDelete := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
	})
	b := ctrl.ControllerManagedBy(mgr).Named("garbagecollector").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, SkipNameValidation: ptrTrue()})
	for i, kind := range ownerKinds {
		if i == 0 {
			b = b.For(kind, ctrl.WithPredicates(onDelete), ctrl.OnlyMetadata)
			continue
		}
		b = b.Watches(kind, toNamespace, ctrl.WithPredicates(onDelete), ctrl.OnlyMetadata)
	}
	return b.Complete(reconcile.Func((&garbageCollector{direct: direct}).sweep))
}

// sweep deletes, in one namespace (req.Namespace for a Cluster, req.Name
// for the others), the dependents whose owners are all gone.
func (g *garbageCollector) sweep(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace := req.Namespace
	if namespace == "" {
		namespace = req.Name
	}
	var errs []error
	exists := map[types.UID]bool{}
	for _, gvk := range dependentKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := g.direct.List(ctx, list, client.InNamespace(namespace)); err != nil {
			if !meta.IsNoMatchError(err) {
				errs = append(errs, err)
			}
			continue
		}
		for i := range list.Items {
			errs = append(errs, g.collect(ctx, &list.Items[i], exists))
		}
	}
	// Every Secret Cluster API makes or reads carries the cluster-name
	// label; listing only those keeps other Secrets out of the sweep.
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := g.direct.List(ctx, secrets, client.InNamespace(namespace), client.HasLabels{clusterv1.ClusterNameLabel}); err != nil {
		errs = append(errs, err)
	}
	for i := range secrets.Items {
		errs = append(errs, g.collect(ctx, &secrets.Items[i], exists))
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// collect deletes obj when it has owners and none of them exists any more.
func (g *garbageCollector) collect(ctx context.Context, obj *metav1.PartialObjectMetadata, exists map[types.UID]bool) error {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	for _, ref := range refs {
		alive, ok := exists[ref.UID]
		if !ok {
			owner := &metav1.PartialObjectMetadata{}
			owner.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
			err := g.direct.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, owner)
			switch {
			case err == nil:
				alive = owner.GetUID() == ref.UID
			case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
				alive = false
			default:
				return fmt.Errorf("reading owner %s %s of %s: %w", ref.Kind, ref.Name, obj.GetName(), err)
			}
			exists[ref.UID] = alive
		}
		if alive {
			return nil
		}
	}
	return client.IgnoreNotFound(g.direct.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}
