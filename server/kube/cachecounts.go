package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Counts reports how many objects of each kind the cache holds, for the
// metrics. It lists with the same types the informers were started with (a
// different type would start a second informer) and without deep copies:
// only lengths are read.
func (ch *Cache) Counts(ctx context.Context) (map[string]int, error) {
	if err := ch.WaitForSync(ctx); err != nil {
		return nil, err
	}
	noCopy := client.UnsafeDisableDeepCopy
	counts := map[string]int{}
	typed := []struct {
		kind string
		list client.ObjectList
	}{
		{"Cluster", &clusterv1.ClusterList{}},
		{"KubeadmControlPlane", &controlplanev1.KubeadmControlPlaneList{}},
		{"MachineDeployment", &clusterv1.MachineDeploymentList{}},
		{"Machine", &clusterv1.MachineList{}},
		{"OpenStackCluster", &OpenStackClusterList{}},
		{"HelmRelease", &HelmReleaseList{}},
		{"Manifests", &ManifestsList{}},
	}
	for _, t := range typed {
		if err := ch.cache.List(ctx, t.list, noCopy); err != nil {
			return nil, err
		}
		counts[t.kind] = lenOf(t.list)
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := ch.cache.List(ctx, secrets, noCopy); err != nil {
		return nil, err
	}
	counts["HelmReleaseSecret"] = len(secrets.Items)
	return counts, nil
}

func lenOf(l client.ObjectList) int {
	switch l := l.(type) {
	case *clusterv1.ClusterList:
		return len(l.Items)
	case *controlplanev1.KubeadmControlPlaneList:
		return len(l.Items)
	case *clusterv1.MachineDeploymentList:
		return len(l.Items)
	case *clusterv1.MachineList:
		return len(l.Items)
	case *OpenStackClusterList:
		return len(l.Items)
	case *HelmReleaseList:
		return len(l.Items)
	case *ManifestsList:
		return len(l.Items)
	}
	return 0
}
