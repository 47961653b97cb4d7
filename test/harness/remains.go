package harness

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterKinds are every kind of object a cluster has in its namespace: what
// the chart renders (the templates it keeps past an uninstall included),
// what the Cluster API controllers and the test bed's providers make from
// it, and Secrets (the driver's, Cluster API's, Helm's release records).
var ClusterKinds = []schema.GroupVersionKind{
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineDeployment"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSet"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineHealthCheck"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfig"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackCluster"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachine"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Kind: "OpenStackServer"},
	{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "HelmRelease"},
	{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: "Manifests"},
	{Version: "v1", Kind: "Secret"},
}

// ClusterRemains lists, as "<Kind> <name>", every object in ns that belongs
// to the cluster with this stack_id (release) and uuid: labelled with the
// chart's or Cluster API's cluster label, the driver's cluster-uuid label,
// or Helm's release name. Empty means nothing of the cluster is left: what
// DELETE_COMPLETE promises.
func ClusterRemains(ctx context.Context, c client.Client, ns, stackID, uuid string) ([]string, error) {
	var selectors []client.MatchingLabels
	if stackID != "" {
		selectors = append(selectors, client.MatchingLabels{"capi.stackhpc.com/cluster": stackID},
			client.MatchingLabels{"cluster.x-k8s.io/cluster-name": stackID}, client.MatchingLabels{"owner": "helm", "name": stackID})
	}
	if uuid != "" {
		selectors = append(selectors, client.MatchingLabels{"magnum.openstack.org/cluster-uuid": uuid})
	}
	var left []string
	for _, gvk := range ClusterKinds {
		for _, sel := range selectors {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(ns), sel); err != nil {
				return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
			}
			for _, o := range list.Items {
				if name := gvk.Kind + " " + o.Name; !slices.Contains(left, name) {
					left = append(left, name)
				}
			}
		}
	}
	return left, nil
}
