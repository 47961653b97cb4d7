package kube

import (
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
)

// chartKinds are the kinds selected by the chart's cluster label.
var chartKinds = []schema.GroupVersionKind{
	ClusterGVK, ControlPlaneGVK, MachineDeploymentGVK, MachineGVK,
	OpenStackClusterGVK, HelmReleaseGVK, ManifestsGVK,
}

// isAddon reports whether gvk is one of the addon provider's kinds.
func isAddon(gvk schema.GroupVersionKind) bool { return gvk == HelmReleaseGVK || gvk == ManifestsGVK }

// typedObject is the object the cache is asked for to watch gvk: a Go type
// where there is one (so reads need no conversion), else unstructured.
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
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func chartObjects() []client.Object {
	out := make([]client.Object, 0, len(chartKinds))
	for _, gvk := range chartKinds {
		out = append(out, typedObject(gvk))
	}
	return out
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
