package capisim

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The test bed runs no kube-controller-manager, hence no garbage collector.
// When the simulator releases an owner's last finalizer it deletes, in the
// collector's stead, the objects that owner owned and no other live owner
// holds.

// garbageKinds are the kinds a Cluster or control plane owns that outlive
// the controllers' own deletion steps.
var garbageKinds = []schema.GroupVersionKind{
	gvkOpenStackMachineTemplate,
	gvkOpenStackMachine,
	gvkHelmRelease,
	gvkManifests,
	bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate"),
	bootstrapv1.GroupVersion.WithKind("KubeadmConfig"),
	clusterv1.GroupVersion.WithKind("MachineHealthCheck"),
	clusterv1.GroupVersion.WithKind("MachineSet"),
	clusterv1.GroupVersion.WithKind("Machine"),
}

// collectGarbage deletes what owner (about to disappear) owns in its
// namespace. Secrets are only looked for among those labelled with the
// cluster's name, as every Secret CAPI owns is, to avoid listing them all.
func (s *Simulator) collectGarbage(ctx context.Context, owner client.Object, clusterName string) error {
	var errs []error
	for _, gvk := range garbageKinds {
		list := newUnstructuredList(gvk)
		if err := s.client.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			errs = append(errs, err)
			continue
		}
		for i := range list.Items {
			errs = append(errs, s.collect(ctx, &list.Items[i], owner.GetUID()))
		}
	}
	secrets := &corev1.SecretList{}
	if err := s.direct.List(ctx, secrets, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		errs = append(errs, err)
	}
	for i := range secrets.Items {
		errs = append(errs, s.collect(ctx, &secrets.Items[i], owner.GetUID()))
	}
	return errors.Join(errs...)
}

// collect deletes obj if it is owned by the dying owner and by no other
// object that still exists.
func (s *Simulator) collect(ctx context.Context, obj client.Object, dying types.UID) error {
	if !ownedBy(obj, dying) || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == dying {
			continue
		}
		other := &unstructured.Unstructured{}
		other.SetAPIVersion(ref.APIVersion)
		other.SetKind(ref.Kind)
		err := s.direct.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, other)
		if err == nil && other.GetUID() == ref.UID {
			return nil // another owner still holds it
		}
		if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			return err
		}
	}
	return client.IgnoreNotFound(s.client.Delete(ctx, obj))
}
