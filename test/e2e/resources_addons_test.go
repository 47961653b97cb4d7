package e2e

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// checkAddonObjects checks the addon provider's objects (addons.stackhpc.com)
// the chart made for TestNodeFeatureLabels's labels, as the management API
// server holds them: no NVIDIA GPU operator (nvidia_gpu_operator_enabled
// false), the AMD one with the cert-manager it needs, Hubble in the Cilium
// addon's values, and Manila CSI for NFS shares: its share protocol, the
// csi-manila StorageClass on the share network and csi-driver-nfs, the node
// plugin NFS shares are mounted by, without the CephFS one.
func checkAddonObjects(t *testing.T, ctx context.Context, ns, stackID string) {
	t.Helper()
	for _, name := range []string{"nvidia-gpu-operator", "csi-cephfs"} {
		if addonObject(t, ctx, "HelmRelease", ns, stackID+"-"+name) != nil {
			t.Errorf("HelmRelease %s-%s exists; its addon is off", stackID, name)
		}
	}
	for name, want := range map[string][2]string{
		"amd-gpu-operator": {"gpu-operator-charts", "kube-amd-gpu"},
		"cert-manager":     {"cert-manager", "cert-manager"},
		"csi-manila":       {"openstack-manila-csi", "openstack-system"},
		"csi-nfs":          {"csi-driver-nfs", "csi-nfs-system"},
	} {
		hr := addonObject(t, ctx, "HelmRelease", ns, stackID+"-"+name)
		if hr == nil {
			t.Errorf("no HelmRelease %s-%s", stackID, name)
			continue
		}
		chart, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "name")
		target, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
		if chart != want[0] || target != want[1] {
			t.Errorf("HelmRelease %s: chart %q into %q, want %q into %q", hr.GetName(), chart, target, want[0], want[1])
		}
	}
	hubble := addonValues(t, ctx, ns, stackID+"-cni-cilium-config")["hubble"]
	if want := map[string]any{"enabled": true, "relay": map[string]any{"enabled": true}, "ui": map[string]any{"enabled": true}}; !reflect.DeepEqual(hubble, want) {
		t.Errorf("Cilium addon values: hubble %v, want %v", hubble, want)
	}
	protocols := addonValues(t, ctx, ns, stackID+"-csi-manila-config")["shareProtocols"]
	if want := []any{map[string]any{"protocolSelector": "NFS", "fsGroupPolicy": "None", "fwdNodePluginEndpoint": map[string]any{
		"dir": "/var/lib/kubelet/plugins/csi-nfsplugin", "sockFile": "csi.sock"}}}; !reflect.DeepEqual(protocols, want) {
		t.Errorf("Manila CSI addon values: shareProtocols %v, want NFS through csi-driver-nfs's socket", protocols)
	}
	checkManilaStorageClass(t, ctx, ns, stackID)
}

// checkManilaStorageClass: the csi-manila StorageClass the Manifests addon
// applies in the workload cluster provisions NFS shares of the label's share
// type on the share network.
func checkManilaStorageClass(t *testing.T, ctx context.Context, ns, stackID string) {
	t.Helper()
	manifests := addonObject(t, ctx, "Manifests", ns, stackID+"-csi-manila-storageclass")
	if manifests == nil {
		t.Errorf("no Manifests %s-csi-manila-storageclass", stackID)
		return
	}
	sources, _, _ := unstructured.NestedSlice(manifests.Object, "spec", "manifestSources")
	var classes []map[string]any
	for _, source := range sources {
		var obj map[string]any
		if text, _ := source.(map[string]any)["template"].(string); yaml.Unmarshal([]byte(text), &obj) == nil && obj["kind"] == "StorageClass" {
			classes = append(classes, obj)
		}
	}
	if len(classes) != 1 {
		t.Fatalf("Manifests %s: %d StorageClasses, want csi-manila alone", manifests.GetName(), len(classes))
	}
	sc := classes[0]
	params, _ := sc["parameters"].(map[string]any)
	if sc["provisioner"] != "nfs.manila.csi.openstack.org" || params["type"] != "nfs-servers" ||
		params["shareNetworkID"] != "0b3c1c9e-5f1a-4d2b-8c7e-3a9f6e2d1b40" {
		t.Errorf("StorageClass csi-manila: provisioner %v, parameters %v; want NFS shares of type nfs-servers on the share network", sc["provisioner"], params)
	}
}

// addonObject reads an addon provider object (addons.stackhpc.com/v1alpha1);
// nil when there is none.
func addonObject(t *testing.T, ctx context.Context, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "addons.stackhpc.com", Version: "v1alpha1", Kind: kind})
	err := stack.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		t.Fatalf("%s %s/%s: %v", kind, ns, name, err)
	}
	return obj
}

// addonValues reads the "overrides" values of an addon's values Secret: the
// chart's addon values (release.values) as the addon provider will merge
// them over its defaults.
func addonValues(t *testing.T, ctx context.Context, ns, name string) map[string]any {
	t.Helper()
	var secret corev1.Secret
	if err := stack.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &secret); err != nil {
		t.Fatalf("Secret %s/%s: %v", ns, name, err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(secret.Data["overrides"], &values); err != nil {
		t.Fatalf("Secret %s/%s overrides: %v", ns, name, err)
	}
	return values
}
