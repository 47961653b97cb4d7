package capisim

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// indexClusterName indexes objects by spec.clusterName, to find the
// MachineDeployments and addons of a Cluster without scanning a namespace.
const indexClusterName = "capisim.spec.clusterName"

// setupControllers registers one controller per simulated kind, each with
// its own work queue, and the watches that wake it when what it reads
// changes.
func (s *Simulator) setupControllers(mgr manager.Manager) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	byClusterName := func(o client.Object) []string {
		if u, ok := o.(*unstructured.Unstructured); ok {
			if n := nestedString(u, "spec", "clusterName"); n != "" {
				return []string{n}
			}
			return nil
		}
		if md, ok := o.(*clusterv1.MachineDeployment); ok && md.Spec.ClusterName != "" {
			return []string{md.Spec.ClusterName}
		}
		return nil
	}
	for _, obj := range []client.Object{newUnstructured(gvkHelmRelease), newUnstructured(gvkManifests), &clusterv1.MachineDeployment{}} {
		if err := idx.IndexField(ctx, obj, indexClusterName, byClusterName); err != nil {
			return fmt.Errorf("indexing %T by cluster name: %w", obj, err)
		}
	}
	opts := controller.Options{MaxConcurrentReconciles: s.opts.Workers}
	scheme, mapper := mgr.GetScheme(), mgr.GetRESTMapper()
	controllerOf := func(owner client.Object) handler.EventHandler {
		return handler.EnqueueRequestForOwner(scheme, mapper, owner, handler.OnlyControllerOwner())
	}

	steps := []struct {
		name string
		b    *builder.Builder
		r    interface {
			Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
		}
	}{
		{"capisim-cluster", ctrl.NewControllerManagedBy(mgr).For(&clusterv1.Cluster{}).
			Watches(newUnstructured(gvkOpenStackCluster), handler.EnqueueRequestsFromMapFunc(s.toOwnerCluster)).
			Watches(&controlplanev1.KubeadmControlPlane{}, handler.EnqueueRequestsFromMapFunc(s.toOwnerCluster)).
			Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(s.toSpecCluster)).
			Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(s.toLabelCluster)).
			Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(s.toLabelCluster)),
			&clusterReconciler{s}},
		{"capisim-openstackcluster", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkOpenStackCluster)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToInfra)),
			&infraClusterReconciler{s}},
		{"capisim-kubeadmcontrolplane", ctrl.NewControllerManagedBy(mgr).For(&controlplanev1.KubeadmControlPlane{}).
			Watches(&clusterv1.Machine{}, controllerOf(&controlplanev1.KubeadmControlPlane{})).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToControlPlane)).
			Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(s.kubeconfigToControlPlane),
				builder.OnlyMetadata, builder.WithPredicates(kubeconfigDeleted)),
			&controlPlaneReconciler{s}},
		{"capisim-machinedeployment", ctrl.NewControllerManagedBy(mgr).For(&clusterv1.MachineDeployment{}).
			Watches(&clusterv1.MachineSet{}, controllerOf(&clusterv1.MachineDeployment{})).
			Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(s.machineToDeployment)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToDeployments)),
			&machineDeploymentReconciler{s}},
		{"capisim-machineset", ctrl.NewControllerManagedBy(mgr).For(&clusterv1.MachineSet{}).
			Watches(&clusterv1.Machine{}, controllerOf(&clusterv1.MachineSet{})).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToMachineSets)).
			Watches(&controlplanev1.KubeadmControlPlane{}, handler.EnqueueRequestsFromMapFunc(s.controlPlaneToMachineSets)),
			&machineSetReconciler{s}},
		{"capisim-machine", ctrl.NewControllerManagedBy(mgr).For(&clusterv1.Machine{}).
			Watches(newUnstructured(gvkOpenStackMachine), handler.EnqueueRequestsFromMapFunc(s.sameNameMachine)).
			Watches(&bootstrapv1.KubeadmConfig{}, handler.EnqueueRequestsFromMapFunc(s.sameNameMachine)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToMachines)).
			Watches(&controlplanev1.KubeadmControlPlane{}, handler.EnqueueRequestsFromMapFunc(s.labelledMachines(clusterv1.MachineControlPlaneNameLabel))).
			Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(s.labelledMachines(clusterv1.MachineDeploymentNameLabel))).
			Watches(&clusterv1.MachineSet{}, handler.EnqueueRequestsFromMapFunc(s.labelledMachines(clusterv1.MachineSetNameLabel))),
			&machineReconciler{s}},
		{"capisim-openstackmachine", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkOpenStackMachine)).
			Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(s.machineToInfra)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToInfraMachines)),
			&infraMachineReconciler{s}},
		{"capisim-helmrelease", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkHelmRelease)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToAddons(gvkHelmRelease))),
			&addonReconciler{Simulator: s, gvk: gvkHelmRelease}},
		{"capisim-manifests", ctrl.NewControllerManagedBy(mgr).For(newUnstructured(gvkManifests)).
			Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(s.clusterToAddons(gvkManifests))),
			&addonReconciler{Simulator: s, gvk: gvkManifests}},
		{"capisim-rules", ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == s.opts.RulesConfigMap.Namespace && o.GetName() == s.opts.RulesConfigMap.Name
		}))),
			&rulesReconciler{s}},
	}
	for _, st := range steps {
		if err := st.b.Named(st.name).WithOptions(opts).Complete(st.r); err != nil {
			return fmt.Errorf("setting up %s: %w", st.name, err)
		}
	}
	return nil
}

func requestFor(namespace, name string) []ctrl.Request {
	if name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

// toOwnerCluster maps an object to the Cluster that owns it.
func (s *Simulator) toOwnerCluster(_ context.Context, o client.Object) []ctrl.Request {
	name, _ := ownerName(o, "Cluster")
	return requestFor(o.GetNamespace(), name)
}

// toSpecCluster maps a MachineDeployment to its Cluster.
func (s *Simulator) toSpecCluster(_ context.Context, o client.Object) []ctrl.Request {
	if md, ok := o.(*clusterv1.MachineDeployment); ok {
		return requestFor(md.Namespace, md.Spec.ClusterName)
	}
	return nil
}

// toLabelCluster maps an object to the Cluster its cluster-name label names.
func (s *Simulator) toLabelCluster(_ context.Context, o client.Object) []ctrl.Request {
	return requestFor(o.GetNamespace(), o.GetLabels()[clusterv1.ClusterNameLabel])
}

func (s *Simulator) clusterToInfra(_ context.Context, o client.Object) []ctrl.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok || c.Spec.InfrastructureRef.Kind != gvkOpenStackCluster.Kind {
		return nil
	}
	return requestFor(c.Namespace, c.Spec.InfrastructureRef.Name)
}

func (s *Simulator) clusterToControlPlane(_ context.Context, o client.Object) []ctrl.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok || c.Spec.ControlPlaneRef.Kind != "KubeadmControlPlane" {
		return nil
	}
	return requestFor(c.Namespace, c.Spec.ControlPlaneRef.Name)
}

func (s *Simulator) clusterToDeployments(ctx context.Context, o client.Object) []ctrl.Request {
	list := &clusterv1.MachineDeploymentList{}
	if err := s.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexClusterName: o.GetName()}); err != nil {
		return nil
	}
	var out []ctrl.Request
	for i := range list.Items {
		out = append(out, requestFor(list.Items[i].Namespace, list.Items[i].Name)...)
	}
	return out
}

// machineToDeployment maps a Machine to its MachineDeployment by CAPI's
// label, whose value is the name, or a hash of a name too long for a label
// (then the deployments of the namespace are searched).
func (s *Simulator) machineToDeployment(ctx context.Context, o client.Object) []ctrl.Request {
	value := o.GetLabels()[clusterv1.MachineDeploymentNameLabel]
	if !strings.HasPrefix(value, "hash_") {
		return requestFor(o.GetNamespace(), value)
	}
	list := &clusterv1.MachineDeploymentList{}
	if err := s.client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	for i := range list.Items {
		if format.MustEqualValue(list.Items[i].Name, value) {
			return requestFor(o.GetNamespace(), list.Items[i].Name)
		}
	}
	return nil
}

// listRequests lists objects of a kind in a namespace with some labels and
// turns them into requests.
func (s *Simulator) listRequests(ctx context.Context, list client.ObjectList, namespace string, labels client.MatchingLabels) []ctrl.Request {
	if err := s.client.List(ctx, list, client.InNamespace(namespace), labels); err != nil {
		return nil
	}
	var out []ctrl.Request
	switch l := list.(type) {
	case *clusterv1.MachineSetList:
		for i := range l.Items {
			out = append(out, requestFor(namespace, l.Items[i].Name)...)
		}
	case *clusterv1.MachineList:
		for i := range l.Items {
			out = append(out, requestFor(namespace, l.Items[i].Name)...)
		}
	case *unstructured.UnstructuredList:
		for i := range l.Items {
			out = append(out, requestFor(namespace, l.Items[i].GetName())...)
		}
	}
	return out
}

func (s *Simulator) clusterToMachineSets(ctx context.Context, o client.Object) []ctrl.Request {
	return s.listRequests(ctx, &clusterv1.MachineSetList{}, o.GetNamespace(), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()})
}

// controlPlaneToMachineSets wakes the MachineSets of a control plane's
// Cluster, whose preflight checks read the control plane.
func (s *Simulator) controlPlaneToMachineSets(ctx context.Context, o client.Object) []ctrl.Request {
	name, _ := ownerName(o, "Cluster")
	if name == "" {
		return nil
	}
	return s.listRequests(ctx, &clusterv1.MachineSetList{}, o.GetNamespace(), client.MatchingLabels{clusterv1.ClusterNameLabel: name})
}

func (s *Simulator) clusterToMachines(ctx context.Context, o client.Object) []ctrl.Request {
	return s.listRequests(ctx, &clusterv1.MachineList{}, o.GetNamespace(), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()})
}

// labelledMachines maps an owner to the Machines carrying its name in the
// given label.
func (s *Simulator) labelledMachines(label string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		return s.listRequests(ctx, &clusterv1.MachineList{}, o.GetNamespace(), client.MatchingLabels{label: format.MustFormatValue(o.GetName())})
	}
}

// sameNameMachine maps an infrastructure machine or bootstrap config to the
// Machine it was made for: KCP and the MachineSet controller give all three
// the same name.
func (s *Simulator) sameNameMachine(_ context.Context, o client.Object) []ctrl.Request {
	return requestFor(o.GetNamespace(), o.GetName())
}

func (s *Simulator) machineToInfra(_ context.Context, o client.Object) []ctrl.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	return requestFor(m.Namespace, m.Spec.InfrastructureRef.Name)
}

func (s *Simulator) clusterToInfraMachines(ctx context.Context, o client.Object) []ctrl.Request {
	return s.listRequests(ctx, newUnstructuredList(gvkOpenStackMachine), o.GetNamespace(), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()})
}

func (s *Simulator) clusterToAddons(gvk schema.GroupVersionKind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		list := newUnstructuredList(gvk)
		if err := s.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{indexClusterName: o.GetName()}); err != nil {
			return nil
		}
		var out []ctrl.Request
		for i := range list.Items {
			out = append(out, requestFor(o.GetNamespace(), list.Items[i].GetName())...)
		}
		return out
	}
}
