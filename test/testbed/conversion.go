package testbed

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	bootstrapconversion "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/conversion"
	controlplaneconversion "sigs.k8s.io/cluster-api/controlplane/kubeadm/webhooks/conversion"
	coreconversion "sigs.k8s.io/cluster-api/core/webhooks/conversion"
)

// contractLabelPrefix is how a provider's CRD says which of its API versions
// implement a Cluster API contract: label cluster.x-k8s.io/<contract> with the
// versions joined by "_".
const contractLabelPrefix = "cluster.x-k8s.io/"

// conversionConverters are Cluster API's own hub/spoke converters, the code the
// real CAPI controllers serve behind their conversion webhooks.
func conversionConverters() map[schema.GroupKind]func(*runtime.Scheme) (crconversion.Converter, error) {
	core := "cluster.x-k8s.io"
	return map[schema.GroupKind]func(*runtime.Scheme) (crconversion.Converter, error){
		{Group: core, Kind: "Cluster"}:                                                coreconversion.Cluster,
		{Group: core, Kind: "ClusterClass"}:                                           coreconversion.ClusterClass,
		{Group: core, Kind: "Machine"}:                                                coreconversion.Machine,
		{Group: core, Kind: "MachineSet"}:                                             coreconversion.MachineSet,
		{Group: core, Kind: "MachineDeployment"}:                                      coreconversion.MachineDeployment,
		{Group: core, Kind: "MachinePool"}:                                            coreconversion.MachinePool,
		{Group: core, Kind: "MachineHealthCheck"}:                                     coreconversion.MachineHealthCheck,
		{Group: core, Kind: "MachineDrainRule"}:                                       coreconversion.MachineDrainRule,
		{Group: "addons.cluster.x-k8s.io", Kind: "ClusterResourceSet"}:                coreconversion.ClusterResourceSet,
		{Group: "addons.cluster.x-k8s.io", Kind: "ClusterResourceSetBinding"}:         coreconversion.ClusterResourceSetBinding,
		{Group: "ipam.cluster.x-k8s.io", Kind: "IPAddress"}:                           coreconversion.IPAddress,
		{Group: "ipam.cluster.x-k8s.io", Kind: "IPAddressClaim"}:                      coreconversion.IPAddressClaim,
		{Group: "runtime.cluster.x-k8s.io", Kind: "ExtensionConfig"}:                  coreconversion.ExtensionConfig,
		{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig"}:                  bootstrapconversion.KubeadmConfig,
		{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate"}:          bootstrapconversion.KubeadmConfigTemplate,
		{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane"}:         controlplaneconversion.KubeadmControlPlane,
		{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlaneTemplate"}: controlplaneconversion.KubeadmControlPlaneTemplate,
	}
}

// newConversionServer builds the HTTPS conversion webhook envtest wired into
// the CAPI CRDs, serving on the host, port and certificates envtest chose.
func newConversionServer(scheme *runtime.Scheme, host string, port int, certDir string) (webhook.Server, error) {
	registry := crconversion.NewRegistry()
	for gk, newConverter := range conversionConverters() {
		converter, err := newConverter(scheme)
		if err != nil {
			return nil, fmt.Errorf("conversion for %s: %w", gk, err)
		}
		if err := registry.RegisterConverter(gk, converter); err != nil {
			return nil, fmt.Errorf("registering conversion for %s: %w", gk, err)
		}
	}
	srv := webhook.NewServer(webhook.Options{Host: host, Port: port, CertDir: certDir})
	srv.Register("/convert", crconversion.NewWebhookHandler(scheme, registry))
	return srv, nil
}

// apiVersionResolver answers CAPI's conversion code when it turns a v1beta2
// reference (API group + kind) back into a v1beta1 apiVersion: the newest
// version the provider's CRD lists for the v1beta2 contract, or the CRD's
// storage version when it carries no contract label (the CRDs as published
// carry none; clusterctl adds them at install).
type apiVersionResolver struct {
	reader client.Reader
	mu     sync.Mutex
	cache  map[schema.GroupKind]string
}

func (r *apiVersionResolver) APIVersion(ctx context.Context, gk schema.GroupKind) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.cache[gk]; ok {
		return v, nil
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := r.reader.List(ctx, &crds); err != nil {
		return "", fmt.Errorf("listing CRDs to resolve %s: %w", gk, err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if crd.Spec.Group != gk.Group || crd.Spec.Names.Kind != gk.Kind {
			continue
		}
		version := contractVersion(crd)
		if version == "" {
			return "", fmt.Errorf("CRD %s serves no version", crd.Name)
		}
		gv := schema.GroupVersion{Group: gk.Group, Version: version}.String()
		if r.cache == nil {
			r.cache = map[schema.GroupKind]string{}
		}
		r.cache[gk] = gv
		return gv, nil
	}
	return "", fmt.Errorf("no CRD defines %s", gk)
}

func contractVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, contract := range []string{"v1beta2", "v1beta1"} {
		if listed := crd.Labels[contractLabelPrefix+contract]; listed != "" {
			versions := strings.Split(listed, "_")
			sort.Strings(versions)
			return versions[len(versions)-1]
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// useResolver points CAPI's conversion packages at the resolver. They keep it
// in package state, so every test bed in one process shares the last one set;
// the resolver only reads CRDs, which every test bed installs identically.
func useResolver(r *apiVersionResolver) {
	coreconversion.SetAPIVersionGetter(r.APIVersion)
	controlplaneconversion.SetAPIVersionGetter(r.APIVersion)
}
