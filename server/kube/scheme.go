package kube

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// The kinds without Go types here: CAPO's and the addon provider's. They are
// read as unstructured objects at these versions.
var (
	OpenStackClusterGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"}
	OpenStackServerGVK  = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "OpenStackServer"}
	HelmReleaseGVK      = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"}
	ManifestsGVK        = schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"}
)

// NewScheme knows the built-in kinds and the CAPI kinds at v1beta2, the
// version the management cluster stores (reading it needs no conversion).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(controlplanev1.AddToScheme(s))
	return s
}
