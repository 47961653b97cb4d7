package watchcache

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The kinds status is derived from, at the versions they are read: the CAPI
// kinds at v1beta2 (what the management cluster stores, so reading them needs
// no conversion), CAPO's and the addon provider's at their served version.
// The watch cache, the read-your-writes barrier and the live reader of
// `magnum-capi status --cluster` all read exactly these.
var (
	ClusterGVK           = clusterv1.GroupVersion.WithKind("Cluster")
	ControlPlaneGVK      = controlplanev1.GroupVersion.WithKind("KubeadmControlPlane")
	MachineDeploymentGVK = clusterv1.GroupVersion.WithKind("MachineDeployment")
	MachineGVK           = clusterv1.GroupVersion.WithKind("Machine")
	// SecretGVK: Helm's release Secrets, read as metadata only (never the
	// release payload).
	SecretGVK = corev1.SchemeGroupVersion.WithKind("Secret")
	// CAPO's and the addon provider's kinds have no Go module here: the cache
	// decodes them into partial types (partial.go), the live reader reads
	// them unstructured.
	OpenStackClusterGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
	OpenStackServerGVK  = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "OpenStackServer"}
	HelmReleaseGVK      = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"}
	ManifestsGVK        = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"}
)

// helmOwnerLabel marks Helm's release Secrets; their "name" label is the
// release's (the cluster's stack id).
const helmOwnerLabel = "owner"

// labelledKinds are the kinds selected by the label naming their cluster
// (indexLabel): CAPO (>= v0.12) labels the OpenStackServer it makes for
// each machine with CAPI's label only, and keeps Nova's answers there.
var labelledKinds = []schema.GroupVersionKind{
	ClusterGVK, ControlPlaneGVK, MachineDeploymentGVK, MachineGVK,
	OpenStackClusterGVK, HelmReleaseGVK, ManifestsGVK, OpenStackServerGVK,
}

// isAddon reports whether gvk is one of the addon provider's kinds.
func isAddon(gvk schema.GroupVersionKind) bool { return gvk == HelmReleaseGVK || gvk == ManifestsGVK }

// typedObject is the object the cache is asked for to watch gvk: CAPI's Go
// types, and the partial types of CAPO's and the addon provider's kinds
// (partial.go). Reads must use the same types: another type would
// start a second informer.
func typedObject(gvk schema.GroupVersionKind) client.Object {
	switch gvk {
	case ClusterGVK:
		return &clusterv1.Cluster{}
	case ControlPlaneGVK:
		return &controlplanev1.KubeadmControlPlane{}
	case MachineDeploymentGVK:
		return &clusterv1.MachineDeployment{}
	case MachineGVK:
		return &clusterv1.Machine{}
	case OpenStackClusterGVK:
		return &OpenStackCluster{}
	case OpenStackServerGVK:
		return &OpenStackServer{}
	case HelmReleaseGVK:
		return &HelmRelease{}
	case ManifestsGVK:
		return &Manifests{}
	case SecretGVK:
		return helmSecretsObject()
	}
	u := &unstructured.Unstructured{} // no kind reaches here; whole objects
	u.SetGroupVersionKind(gvk)
	return u
}

// cachedKinds are the kinds the cache watches: the chart's, CAPO's servers
// and Helm's release Secrets.
func cachedKinds() []schema.GroupVersionKind {
	return append(slices.Clone(labelledKinds), SecretGVK)
}

func helmSecretsObject() client.Object {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(SecretGVK)
	return s
}

// listKind is gvk's list kind.
func listKind(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	return gvk.GroupVersion().WithKind(gvk.Kind + "List")
}
