package capicontrollers

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The provider kinds have no Go types here (CAPO's module would pull its
// own Cluster API version in; the addon provider is Python), so they are
// handled as unstructured objects at their only served version.
var (
	gvkOpenStackCluster         = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
	gvkOpenStackMachine         = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachine"}
	gvkOpenStackMachineTemplate = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"}
	gvkOpenStackServer          = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "OpenStackServer"}
	gvkHelmRelease              = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"}
	gvkManifests                = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"}
	gvkCluster                  = clusterv1.GroupVersion.WithKind("Cluster")
)

// Finalizers CAPO and the addon provider put on their objects.
const (
	openStackClusterFinalizer = "openstackcluster.infrastructure.cluster.x-k8s.io"
	openStackMachineFinalizer = "openstackmachine.infrastructure.cluster.x-k8s.io"
	openStackServerFinalizer  = "openstackserver.infrastructure.cluster.x-k8s.io"
	addonFinalizer            = "addons.stackhpc.com/finalizer"
)

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

func nestedString(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}

func nestedBool(u *unstructured.Unstructured, fields ...string) bool {
	b, _, _ := unstructured.NestedBool(u.Object, fields...)
	return b
}

// getCluster reads a Cluster; nil without error when it does not exist.
func (p *Provider) getCluster(ctx context.Context, namespace, name string) (*clusterv1.Cluster, error) {
	c := &clusterv1.Cluster{}
	if err := p.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return c, nil
}

// ownerName returns the name of the owner of obj of the given kind, or "".
func ownerName(obj metav1.Object, kind string) string {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kind {
			return r.Name
		}
	}
	return ""
}

// ensureMeta applies mutate to obj and patches what changed in its
// metadata or spec, with optimistic locking since labels, finalizers and
// owner references are lists and maps others write too.
func (p *Provider) ensureMeta(ctx context.Context, obj client.Object, mutate func() bool) (bool, error) {
	original, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copying %T", obj)
	}
	if !mutate() {
		return false, nil
	}
	if err := p.client.Patch(ctx, obj, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, err
	}
	return true, nil
}

// addFinalizer adds a finalizer the way CAPO does first thing, so that
// nothing it creates can leak.
func (p *Provider) addFinalizer(ctx context.Context, obj client.Object, finalizer string) (bool, error) {
	return p.ensureMeta(ctx, obj, func() bool { return controllerutil.AddFinalizer(obj, finalizer) })
}

func (p *Provider) removeFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	_, err := p.ensureMeta(ctx, obj, func() bool { return controllerutil.RemoveFinalizer(obj, finalizer) })
	return client.IgnoreNotFound(err)
}

// patchStatus writes the status of obj if it differs from original.
func (p *Provider) patchStatus(ctx context.Context, obj, original client.Object) error {
	return client.IgnoreNotFound(p.client.Status().Patch(ctx, obj, client.MergeFrom(original)))
}

// settle turns the errors that only mean "the cache is behind" (a conflict
// on an optimistic lock, an object gone meanwhile) into a quiet retry.
func (p *Provider) settle(res reconcile.Result, err error) (reconcile.Result, error) {
	switch {
	case err == nil:
		return res, nil
	case apierrors.IsConflict(err):
		return reconcile.Result{RequeueAfter: p.opts.Step / 4}, nil
	case apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err):
		return reconcile.Result{RequeueAfter: p.opts.Step}, nil
	}
	return res, err
}

// after asks for another reconcile after d (at least a millisecond).
func after(d time.Duration) reconcile.Result {
	return reconcile.Result{RequeueAfter: max(d, time.Millisecond)}
}

// fakeUUID makes a stable UUID-shaped identifier from a seed, for the
// OpenStack resources the provider pretends to create.
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

// capoConditions reads and writes the v1beta1 condition list CAPO keeps in
// status.conditions, for Cluster API's v1beta1 condition helpers.
type capoConditions struct{ *unstructured.Unstructured }

func (c capoConditions) GetV1Beta1Conditions() clusterv1.Conditions {
	raw, ok, err := unstructured.NestedSlice(c.Object, "status", "conditions")
	if err != nil || !ok {
		return nil
	}
	out := make(clusterv1.Conditions, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var cond clusterv1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err == nil {
			out = append(out, cond)
		}
	}
	return out
}

func (c capoConditions) SetV1Beta1Conditions(conds clusterv1.Conditions) {
	raw := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			continue
		}
		raw = append(raw, m)
	}
	_ = unstructured.SetNestedSlice(c.Object, raw, "status", "conditions")
}

// CAPO's condition types and reasons (api/v1beta1/conditions_consts.go).
const (
	condReady               = clusterv1.ReadyV1Beta1Condition
	condNetworkReady        = clusterv1.ConditionType("NetworkReady")
	condRouterReady         = clusterv1.ConditionType("RouterReady")
	condSecurityGroupsReady = clusterv1.ConditionType("SecurityGroupsReady")
	condAPIEndpointReady    = clusterv1.ConditionType("APIEndpointReady")
	condInstanceReady       = clusterv1.ConditionType("InstanceReady")
	condAPIServerIngress    = clusterv1.ConditionType("APIServerIngressReadyCondition")

	reasonOpenStackError         = "OpenStackError"
	reasonAPIEndpointFailed      = "APIEndpointConfigFailed"
	reasonWaitingForInfra        = "WaitingForClusterInfrastructure"
	reasonWaitingForBootstrap    = "WaitingForBootstrapData"
	reasonInstanceCreateFailed   = "InstanceCreateFailed"
	reasonInstanceNotFound       = "InstanceNotFound"
	reasonInstanceStateError     = "InstanceStateError"
	reasonInstanceDeleted        = "InstanceDeleted"
	reasonInstanceNotReady       = "InstanceNotReady"
	serverUnexpectedlyDeletedMsg = "The server was unexpectedly deleted"
	// capoUpdateError is the only failureReason CAPO v0.14 writes
	// (DeprecatedCAPOUpdateClusterError and ...MachineError are both
	// "UpdateError").
	capoUpdateError = "UpdateError"
)
