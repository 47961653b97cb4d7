package capicontrollers

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// contractLabels are the labels clusterctl puts on providers' CRDs at
// install (from their kustomizations), mapping each Cluster API contract
// to the API version that implements it; the controllers read them to know
// how to read a provider's objects. The CRDs as the test bed installs them
// carry none.
var contractLabels = map[string]map[string]string{
	// kubeadm control plane and bootstrap v1.13 (config/crd/kustomization.yaml).
	"controlplane.cluster.x-k8s.io": {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"},
	"bootstrap.cluster.x-k8s.io":    {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"},
	// CAPO v0.14 implements the v1beta1 contract.
	"infrastructure.cluster.x-k8s.io": {"cluster.x-k8s.io/v1beta1": "v1beta1"},
}

// labelContracts labels the provider CRDs. Idempotent.
func labelContracts(ctx context.Context, c client.Client) error {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return fmt.Errorf("listing CRDs: %w", err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		labels := contractLabels[crd.Spec.Group]
		if labels == nil {
			continue
		}
		patch := client.MergeFrom(crd.DeepCopy())
		changed := false
		for k, v := range labels {
			if crd.Labels[k] != v {
				if crd.Labels == nil {
					crd.Labels = map[string]string{}
				}
				crd.Labels[k], changed = v, true
			}
		}
		if changed {
			if err := c.Patch(ctx, crd, patch); err != nil {
				return fmt.Errorf("labelling CRD %s with its contract: %w", crd.Name, err)
			}
		}
	}
	return nil
}
