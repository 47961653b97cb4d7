package kube

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestLeftovers runs against the test bed's real API server, with the real
// CAPI and CAPO CRDs: what is left of one release is found by the chart's
// and Cluster API's labels, the driver's own Secrets are skipped, another
// release's objects are not named, and a Secret with both labels is named
// once.
func TestLeftovers(t *testing.T) {
	ctx := context.Background()
	c, err := Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	const rel, other, ours = "demo-abc", "other-def", "magnum.openstack.org/cluster-uuid"
	template := func(apiVersion, kind, name, release string) client.Object {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace(ns)
		u.SetName(name)
		// The driver's post-renderer labels the chart's objects with the
		// cluster's uuid too: only the driver's Secrets are skipped for it.
		u.SetLabels(map[string]string{chartClusterLabel: release, ours: "uuid"})
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{"format": "cloud-config"}}}
		if kind == "OpenStackMachineTemplate" {
			spec = map[string]any{"template": map[string]any{"spec": map[string]any{
				"flavor": "m1.small", "image": map[string]any{"filter": map[string]any{"name": "ubuntu"}}}}}
		}
		_ = unstructured.SetNestedField(u.Object, spec, "spec")
		return u
	}
	secret := func(name string, labels map[string]string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	for _, obj := range []client.Object{
		template("infrastructure.cluster.x-k8s.io/v1beta1", "OpenStackMachineTemplate", rel+"-control-plane-1a2b3c4d", rel),
		template("infrastructure.cluster.x-k8s.io/v1beta1", "OpenStackMachineTemplate", other+"-control-plane-1a2b3c4d", other),
		template("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", rel+"-default-worker-5e6f7a8b", rel),
		secret(rel+"-kubeconfig", map[string]string{capiClusterLabel: rel}),
		secret(rel+"-both", map[string]string{capiClusterLabel: rel, chartClusterLabel: rel}),
		secret(rel+"-ca", map[string]string{capiClusterLabel: rel, ours: "uuid"}),
		secret(other+"-kubeconfig", map[string]string{capiClusterLabel: other}),
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	got, err := c.Leftovers(ctx, ns, rel, ours)
	if err != nil {
		t.Fatal(err)
	}
	want := []Leftover{
		{"OpenStackMachineTemplate", rel + "-control-plane-1a2b3c4d"},
		{"KubeadmConfigTemplate", rel + "-default-worker-5e6f7a8b"},
		{"Secret", rel + "-both"},
		{"Secret", rel + "-kubeconfig"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Leftovers = %v, want %v", got, want)
	}
	if got, err := c.Leftovers(ctx, ns, "gone-xyz", ours); err != nil || len(got) != 0 {
		t.Errorf("Leftovers of a release with nothing left = %v, %v; want none", got, err)
	}
}
