package watchcache

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadLive reads once, directly from the API server and without a
// cache, what the watch cache holds for cluster stackID in ns: every object
// of the watched kinds labelled with the chart's cluster label (CAPO's
// servers with CAPI's), at the same
// versions, as unstructured objects (`magnum-capi status --cluster` feeds
// them to the same derivation the sidecar uses). managedFields are kept: they
// are the only record of when an addon failed. Helm's release Secrets of the
// namespace (all releases: their absence then means "not installed" rather
// than "not dumped") are read as metadata only, never their payload.
func ReadLive(ctx context.Context, c client.Client, ns, stackID string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, gvk := range labelledKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(listKind(gvk))
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{indexLabel(gvk): stackID}); err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", gvk.Kind, ns, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			o.SetGroupVersionKind(gvk)
			out = append(out, o)
		}
	}
	secrets := &metav1.PartialObjectMetadataList{}
	secrets.SetGroupVersionKind(listKind(SecretGVK))
	if err := c.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{helmOwnerLabel: "helm"}); err != nil {
		return nil, fmt.Errorf("listing Helm release Secrets in %s: %w", ns, err)
	}
	for i := range secrets.Items {
		meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&secrets.Items[i].ObjectMeta)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": meta}}
		u.SetGroupVersionKind(SecretGVK)
		out = append(out, u)
	}
	return out, nil
}
