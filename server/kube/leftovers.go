package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Leftover is one object of a deleted cluster still in its namespace.
type Leftover struct{ Kind, Name string }

// The labels a cluster's objects are found by: the chart's on everything it
// renders, Cluster API's on what its controllers make (the kubeconfig and
// bootstrap data Secrets).
const (
	chartClusterLabel = "capi.stackhpc.com/cluster"
	capiClusterLabel  = "cluster.x-k8s.io/cluster-name"
)

// leftoverQueries are the kinds of a cluster's objects that outlive the
// Helm uninstall and the CAPI Cluster, with the label that finds them: the
// chart keeps its machine templates (helm.sh/resource-policy: keep, so a
// rollout can still read the old ones) and Cluster API's Secrets are owned
// by the Cluster; Kubernetes' garbage collector deletes both once the
// Cluster is gone. Secrets the chart renders are looked for too.
var leftoverQueries = []struct {
	gvk   schema.GroupVersionKind
	label string
}{
	{schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "OpenStackMachineTemplate"}, chartClusterLabel},
	{schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfigTemplate"}, chartClusterLabel},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, chartClusterLabel},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, capiClusterLabel},
}

// Leftovers lists, by metadata only, what of release is still in ns besides
// the kinds the watch cache carries, except Secrets carrying ownLabel (the
// driver's own, which the caller deletes itself; the driver labels the
// chart's objects with it too). Asked once a deletion looks complete, so a
// status poll costs no request before that.
func (c *Cluster) Leftovers(ctx context.Context, ns, release, ownLabel string) ([]Leftover, error) {
	var out []Leftover
	seen := map[Leftover]bool{}
	for _, q := range leftoverQueries {
		items, err := c.listMetadata(ctx, q.gvk, ns, labels.SelectorFromSet(labels.Set{q.label: release}))
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			l := Leftover{Kind: q.gvk.Kind, Name: it.Name}
			if _, own := it.Labels[ownLabel]; (own && l.Kind == "Secret") || seen[l] {
				continue
			}
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}

func (c *Cluster) listMetadata(ctx context.Context, gvk schema.GroupVersionKind, ns string, sel labels.Selector) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns, err)
	}
	return list.Items, nil
}
