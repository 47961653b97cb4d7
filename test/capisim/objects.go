package capisim

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The provider kinds have no Go types here (CAPO has no Go module in this
// repository, the addon provider is Python), so they are handled as
// unstructured objects at their only served version.
var (
	gvkOpenStackCluster         = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
	gvkOpenStackMachine         = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachine"}
	gvkOpenStackMachineTemplate = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"}
	gvkHelmRelease              = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"}
	gvkManifests                = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"}
)

// Finalizers the real controllers put on their objects.
const (
	openStackClusterFinalizer = "openstackcluster.infrastructure.cluster.x-k8s.io"
	openStackMachineFinalizer = "openstackmachine.infrastructure.cluster.x-k8s.io"
	addonFinalizer            = "addons.stackhpc.com/finalizer"
)

// Labels the real controllers add.
const (
	labelAddonCluster          = "addons.stackhpc.com/cluster"
	labelAddonReleaseNamespace = "addons.stackhpc.com/release-namespace"
	labelAddonReleaseName      = "addons.stackhpc.com/release-name"
	labelAddonWatch            = "addons.stackhpc.com/watch"
)

// annotationReplacement marks a Machine created to replace an out-of-date
// one, so that the stuck-rollout fault can hold it back. Simulator-only.
const annotationReplacement = annotationPrefix + "replacement"

// annotationKubeadmConfigHash records on a control-plane Machine which
// kubeadmConfigSpec it was made from, so that a changed spec rolls it as KCP
// does. Simulator-only.
const annotationKubeadmConfigHash = annotationPrefix + "kubeadm-config-hash"

// newUnstructured is an empty object of a provider kind.
func newUnstructured(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func newUnstructuredList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// gvkForRef resolves a v1beta2 contract reference (API group + kind) to the
// version the simulator handles it at.
func gvkForRef(ref clusterv1.ContractVersionedObjectReference) (schema.GroupVersionKind, error) {
	gk := schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}
	for _, gvk := range []schema.GroupVersionKind{
		gvkOpenStackCluster, gvkOpenStackMachine, gvkOpenStackMachineTemplate,
		controlplanev1.GroupVersion.WithKind("KubeadmControlPlane"),
		bootstrapv1.GroupVersion.WithKind("KubeadmConfig"),
		bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate"),
	} {
		if gvk.GroupKind() == gk {
			return gvk, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("the simulator does not handle %s (reference to %q)", gk, ref.Name)
}

// getRef reads the object a contract reference names, as unstructured.
func (s *Simulator) getRef(ctx context.Context, namespace string, ref clusterv1.ContractVersionedObjectReference) (*unstructured.Unstructured, error) {
	gvk, err := gvkForRef(ref)
	if err != nil {
		return nil, err
	}
	u := newUnstructured(gvk)
	if err := s.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

// getCluster reads a Cluster; nil without error when it does not exist.
func (s *Simulator) getCluster(ctx context.Context, namespace, name string) (*clusterv1.Cluster, error) {
	c := &clusterv1.Cluster{}
	if err := s.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return c, nil
}

// ownerRefTo is an owner reference to obj (of kind gvk); a controller
// reference, which also blocks the owner's deletion, when controller is set.
func ownerRefTo(obj client.Object, gvk schema.GroupVersionKind, controller bool) metav1.OwnerReference {
	ref := metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
	}
	if controller {
		ref.Controller = ptrTo(true)
		ref.BlockOwnerDeletion = ptrTo(true)
	}
	return ref
}

var gvkCluster = clusterv1.GroupVersion.WithKind("Cluster")

// withOwnerRef returns refs with ref added or, when one to the same object
// exists, replaced. It reports whether anything changed.
func withOwnerRef(refs []metav1.OwnerReference, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	for i, r := range refs {
		if r.UID == ref.UID || (r.Kind == ref.Kind && r.Name == ref.Name && sameGroup(r.APIVersion, ref.APIVersion)) {
			if r.UID == ref.UID && r.APIVersion == ref.APIVersion && ptrEq(r.Controller, ref.Controller) && ptrEq(r.BlockOwnerDeletion, ref.BlockOwnerDeletion) {
				return refs, false
			}
			out := append([]metav1.OwnerReference(nil), refs...)
			out[i] = ref
			return out, true
		}
	}
	return append(append([]metav1.OwnerReference(nil), refs...), ref), true
}

func sameGroup(a, b string) bool {
	ga, _ := schema.ParseGroupVersion(a)
	gb, _ := schema.ParseGroupVersion(b)
	return ga.Group == gb.Group
}

// ownerName returns the name of the owner of obj of the given kind, or "".
func ownerName(obj metav1.Object, kind string) (string, types.UID) {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kind {
			return r.Name, r.UID
		}
	}
	return "", ""
}

// ownedBy reports whether obj has an owner reference to the UID.
func ownedBy(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// ensureMeta applies mutate to obj and patches what changed in its
// metadata or spec, with optimistic locking since labels, finalizers and
// owner references are lists and maps others write too.
func (s *Simulator) ensureMeta(ctx context.Context, obj client.Object, mutate func() bool) (bool, error) {
	original, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copying %T", obj)
	}
	if !mutate() {
		return false, nil
	}
	if err := s.client.Patch(ctx, obj, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, err
	}
	return true, nil
}

// addFinalizer adds a finalizer the way the real controllers do first
// thing, so that nothing they create can leak.
func (s *Simulator) addFinalizer(ctx context.Context, obj client.Object, finalizer string) (bool, error) {
	return s.ensureMeta(ctx, obj, func() bool { return controllerutil.AddFinalizer(obj, finalizer) })
}

func (s *Simulator) removeFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	_, err := s.ensureMeta(ctx, obj, func() bool { return controllerutil.RemoveFinalizer(obj, finalizer) })
	return client.IgnoreNotFound(err)
}

// patchStatus writes the status of obj if it differs from original.
func (s *Simulator) patchStatus(ctx context.Context, obj, original client.Object) error {
	return client.IgnoreNotFound(s.client.Status().Patch(ctx, obj, client.MergeFrom(original)))
}

// deleteIfPresent starts deleting obj unless it already is.
func (s *Simulator) deleteIfPresent(ctx context.Context, obj client.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	return client.IgnoreNotFound(s.client.Delete(ctx, obj))
}

// settle turns the errors that only mean "the cache is behind" (a conflict
// on an optimistic lock, an object gone meanwhile) into a quiet retry.
func (s *Simulator) settle(res reconcile.Result, err error) (reconcile.Result, error) {
	switch {
	case err == nil:
		return res, nil
	case apierrors.IsConflict(err):
		return reconcile.Result{RequeueAfter: s.opts.Step / 4}, nil
	case apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err):
		// E.g. a machine template not created yet: retry at the pace of
		// the simulation, not in a tight loop.
		return reconcile.Result{RequeueAfter: s.opts.Step}, nil
	}
	return res, err
}

// after asks for another reconcile after d (at least a millisecond).
func after(d time.Duration) reconcile.Result {
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return reconcile.Result{RequeueAfter: d}
}

// fakeUUID makes a stable UUID-shaped identifier from a seed, for the
// OpenStack resources the simulator pretends to create.
func fakeUUID(seed ...string) string {
	h := sha1.New()
	for _, s := range seed {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)[:16]
	b[6] = (b[6] & 0x0f) | 0x50 // version 5
	b[8] = (b[8] & 0x3f) | 0x80 // RFC 4122 variant
	x := hex.EncodeToString(b)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// shortHash is a short stable digest, e.g. of a template.
func shortHash(seed ...string) string {
	h := sha1.New()
	for _, s := range seed {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

func ptrTo[T any](v T) *T { return &v }

func ptrEq[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
