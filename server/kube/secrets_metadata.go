package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretMeta is a Secret without its data.
type SecretMeta struct {
	Namespace, Name     string
	Labels, Annotations map[string]string
}

// secretPage bounds one LIST of SecretsWithLabel, so a site with many
// clusters is read in pages rather than in one large answer.
const secretPage = 500

// SecretsWithLabel lists, by metadata only and in every namespace, the
// Secrets that carry the label key. The data never leaves the API server.
func (c *Cluster) SecretsWithLabel(ctx context.Context, key string) ([]SecretMeta, error) {
	var out []SecretMeta
	cont := ""
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "SecretList"})
		opts := []client.ListOption{client.HasLabels{key}, client.Limit(secretPage)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := c.Client.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing Secrets labelled %s: %w", key, err)
		}
		for _, s := range list.Items {
			out = append(out, SecretMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels, Annotations: s.Annotations})
		}
		if cont = list.Continue; cont == "" {
			return out, nil
		}
	}
}
