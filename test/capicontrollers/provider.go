package capicontrollers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/go-logr/logr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Provider is our code in the manager: the OpenStack infrastructure
// provider, the addon provider stand-in, the fault rules and the garbage
// collector.
type Provider struct {
	// client reads from the manager's cache and writes directly.
	client client.Client
	// direct reads Secrets straight from the API server, which the manager
	// caches only for Cluster API's own use.
	direct client.Client
	opts   Options
	log    logr.Logger

	pace      *pacer
	faults    faultBook
	ips       *ipAllocator
	nova      nova
	workloads *workloads
	// wake feeds OpenStackMachines to their controller (outages.go).
	wake chan event.GenericEvent
}

// faultsFor returns the faults injected into a Cluster.
func (p *Provider) faultsFor(cluster *clusterv1.Cluster) Faults {
	return p.faults.faultsFor(cluster.Namespace, cluster.Name, cluster.Annotations)
}

// indexClusterName indexes addons by spec.clusterName.
const indexClusterName = "capicontrollers.spec.clusterName"

// setup registers our controllers with the manager.
func (p *Provider) setup(ctx context.Context, mgr manager.Manager) error {
	for _, gvk := range []schema.GroupVersionKind{gvkHelmRelease, gvkManifests} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, newUnstructured(gvk), indexClusterName, func(o client.Object) []string {
			if n := nestedString(o.(*unstructured.Unstructured), "spec", "clusterName"); n != "" {
				return []string{n}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("indexing %s by cluster name: %w", gvk.Kind, err)
		}
	}
	opts := controller.Options{MaxConcurrentReconciles: p.opts.Concurrency, SkipNameValidation: ptrTrue()}
	steps := []struct {
		name string
		b    *builder.Builder
		r    reconcile.Reconciler
	}{
		{"openstackcluster", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkOpenStackCluster)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToInfra)),
			&openStackClusterReconciler{p}},
		{"openstackmachine", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkOpenStackMachine)).
			Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToInfra)).
			Watches(newUnstructured(gvkOpenStackServer), handler.EnqueueRequestsFromMapFunc(sameName)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(p.clusterToInfraMachines)).
			WatchesRawSource(source.Channel(p.wake, &handler.EnqueueRequestForObject{})),
			&openStackMachineReconciler{p}},
		{"openstackserver", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkOpenStackServer)),
			&openStackServerReconciler{p}},
		{"helmrelease", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkHelmRelease)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(p.clusterToAddons(gvkHelmRelease))),
			&addonReconciler{Provider: p, gvk: gvkHelmRelease}},
		{"manifests", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkManifests)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(p.clusterToAddons(gvkManifests))),
			&addonReconciler{Provider: p, gvk: gvkManifests}},
		{"faultrules", ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == p.opts.RulesConfigMap.Namespace && o.GetName() == p.opts.RulesConfigMap.Name
		}))), &rulesReconciler{p}},
	}
	for _, st := range steps {
		if err := st.b.Named(st.name).WithOptions(opts).Complete(st.r); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", st.name, err)
		}
	}
	return nil
}

func ptrTrue() *bool { t := true; return &t }

func requestFor(namespace, name string) []ctrl.Request {
	if name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

func clusterToInfra(_ context.Context, o client.Object) []ctrl.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok || c.Spec.InfrastructureRef.Kind != gvkOpenStackCluster.Kind {
		return nil
	}
	return requestFor(c.Namespace, c.Spec.InfrastructureRef.Name)
}

func machineToInfra(_ context.Context, o client.Object) []ctrl.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok || m.Spec.InfrastructureRef.Kind != gvkOpenStackMachine.Kind {
		return nil
	}
	return requestFor(m.Namespace, m.Spec.InfrastructureRef.Name)
}

func sameName(_ context.Context, o client.Object) []ctrl.Request {
	return requestFor(o.GetNamespace(), o.GetName())
}

func (p *Provider) clusterToInfraMachines(ctx context.Context, o client.Object) []ctrl.Request {
	list := newUnstructuredList(gvkOpenStackMachine)
	if err := p.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range list.Items {
		out = append(out, requestFor(list.Items[i].GetNamespace(), list.Items[i].GetName())...)
	}
	return out
}

func (p *Provider) clusterToAddons(gvk schema.GroupVersionKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		list := newUnstructuredList(gvk)
		if err := p.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexClusterName: o.GetName()}); err != nil {
			return nil
		}
		var out []ctrl.Request
		for i := range list.Items {
			out = append(out, requestFor(list.Items[i].GetNamespace(), list.Items[i].GetName())...)
		}
		return out
	}
}

// rulesReconciler reads the fault rules ConfigMap whenever it changes.
type rulesReconciler struct{ *Provider }

func (r *rulesReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.direct.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.faults.setRules(nil)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	rules, err := ParseRules(cm.Data[RulesConfigMapKey])
	if err != nil {
		// A broken rule set is the test author's mistake: keep the last
		// good rules and say why in the log.
		r.log.Error(err, "ignoring the fault rules ConfigMap", "configMap", req.String())
		return ctrl.Result{}, nil
	}
	r.faults.setRules(rules)
	return ctrl.Result{}, nil
}
