package watchcache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// The watch cache decodes CAPO's and the addon provider's kinds, which have
// no Go module here, into partial Go types: capistatus's shapes of the fields
// status derivation reads. The JSON decoder skips every other field without
// allocating it, so the cache never holds an addon's chart values or an
// OpenStackCluster's networks and security group rules; read as
// unstructured maps, these made up most of the cache's memory
// (docs/benchmarks.md). They are known to the cache's own scheme only: a
// client that wrote one back would erase what it does not hold.

// OpenStackCluster is the cached form of CAPO's OpenStackCluster.
type OpenStackCluster struct {
	capistatus.OpenStackCluster `json:",inline"`
}

// OpenStackServer is the cached form of CAPO's OpenStackServer.
type OpenStackServer struct {
	capistatus.OpenStackServer `json:",inline"`
}

// HelmRelease is the cached form of an addon provider HelmRelease.
type HelmRelease struct {
	capistatus.AddonObject `json:",inline"`
}

// Manifests is the cached form of an addon provider Manifests.
type Manifests struct {
	capistatus.AddonObject `json:",inline"`
}

// partialList is the list kind of a partial type, which the informers
// list with.
type partialList[T any, P interface {
	*T
	runtime.Object
}] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []T `json:"items"`
}

func (o *OpenStackCluster) DeepCopyObject() runtime.Object {
	out := &OpenStackCluster{}
	o.OpenStackCluster.DeepCopyInto(&out.OpenStackCluster)
	return out
}

func (o *OpenStackServer) DeepCopyObject() runtime.Object {
	out := &OpenStackServer{}
	o.OpenStackServer.DeepCopyInto(&out.OpenStackServer)
	return out
}

func (o *HelmRelease) DeepCopyObject() runtime.Object {
	out := &HelmRelease{}
	o.AddonObject.DeepCopyInto(&out.AddonObject)
	return out
}

func (o *Manifests) DeepCopyObject() runtime.Object {
	out := &Manifests{}
	o.AddonObject.DeepCopyInto(&out.AddonObject)
	return out
}

func (l *partialList[T, P]) DeepCopyObject() runtime.Object {
	out := &partialList[T, P]{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]T, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *P(&l.Items[i]).DeepCopyObject().(P)
		}
	}
	return out
}

// addPartialKinds registers the partial types under their kinds' names.
func addPartialKinds(s *runtime.Scheme) {
	for gvk, obj := range map[schema.GroupVersionKind]runtime.Object{
		OpenStackClusterGVK:           &OpenStackCluster{},
		listKind(OpenStackClusterGVK): &partialList[OpenStackCluster, *OpenStackCluster]{},
		OpenStackServerGVK:            &OpenStackServer{},
		listKind(OpenStackServerGVK):  &partialList[OpenStackServer, *OpenStackServer]{},
		HelmReleaseGVK:                &HelmRelease{},
		listKind(HelmReleaseGVK):      &partialList[HelmRelease, *HelmRelease]{},
		ManifestsGVK:                  &Manifests{},
		listKind(ManifestsGVK):        &partialList[Manifests, *Manifests]{},
	} {
		s.AddKnownTypeWithName(gvk, obj)
	}
	// The list options a cached List sends must be convertible in these
	// groups, as for any registered group version.
	metav1.AddToGroupVersion(s, OpenStackClusterGVK.GroupVersion())
	metav1.AddToGroupVersion(s, OpenStackServerGVK.GroupVersion())
	metav1.AddToGroupVersion(s, HelmReleaseGVK.GroupVersion())
}

// newCacheScheme knows what the cache decodes, and no more (a scheme of
// every built-in kind costs megabytes): the core kinds (Helm's Secrets are
// read as metadata), CAPI's kinds and the partial kinds.
func newCacheScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(controlplanev1.AddToScheme(s))
	addPartialKinds(s)
	return s
}

// addonObject is the partial addon inside a cached HelmRelease or
// Manifests; nil for anything else.
func addonObject(obj any) *capistatus.AddonObject {
	switch o := obj.(type) {
	case *HelmRelease:
		return &o.AddonObject
	case *Manifests:
		return &o.AddonObject
	}
	return nil
}
