package capisim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestReleaseCreatedReadyDeleted takes one release from created to all
// ready, checking the way there, then through deletion.
func TestReleaseCreatedReadyDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("lifecycle", ns)
	r.ControlPlane.Replicas = 3
	r.NodeGroups = []nodeGroupValues{
		{Name: "fixed", Replicas: 2, Version: "v1.29.2", Hash: "aaaa0001", Flavor: "vm.small"},
		{Name: "auto", Autoscale: true, Min: 1, Max: 3, Version: "v1.29.2", Hash: "aaaa0002", Flavor: "vm.small"},
	}
	clusterPhases := record(t, ns, clusterv1.GroupVersion.WithKind("Cluster"), "status", "phase")
	mdPhases := record(t, ns, clusterv1.GroupVersion.WithKind("MachineDeployment"), "status", "phase")
	machinePhases := record(t, ns, clusterv1.GroupVersion.WithKind("Machine"), "status", "phase")
	addonPhases := record(t, ns, gvkHR, "status", "phase")

	start := time.Now()
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })
	t.Logf("ready after %s", time.Since(start).Round(time.Millisecond))

	if seen := clusterPhases.values(r.Name); !inOrder(seen, "Provisioning", "Provisioned") {
		t.Errorf("Cluster phases %v", seen)
	}
	if seen := mdPhases.values(r.Name + "-fixed"); !inOrder(seen, "ScalingUp", "Running") {
		t.Errorf("MachineDeployment phases %v", seen)
	}
	for name, seen := range machinePhases.all() {
		if !inOrder(seen, "Pending", "Provisioning", "Provisioned", "Running") {
			t.Errorf("Machine %s phases %v", name, seen)
		}
	}
	if seen := addonPhases.values(r.Name + "-cni-calico"); !inOrder(seen, "Pending", "Installing", "Deployed") {
		t.Errorf("HelmRelease phases %v", seen)
	}

	// The control plane generated the CA Secrets (none existed) and owns
	// them; the Cluster owns the machine templates.
	kcp := &controlplanev1.KubeadmControlPlane{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-control-plane"}, kcp); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"ca", "etcd", "proxy", "sa", "kubeconfig"} {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-" + suffix}, s); err != nil {
			t.Fatalf("Secret %s-%s: %v", r.Name, suffix, err)
		}
		if !ownedByKind(s, "KubeadmControlPlane", kcp.Name) || s.Labels[clusterv1.ClusterNameLabel] != r.Name {
			t.Errorf("Secret %s owners %v labels %v", s.Name, s.OwnerReferences, s.Labels)
		}
	}
	osmt, err := getU(ctx, gvkOSMT, ns, r.Name+"-control-plane-"+r.ControlPlane.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if !ownedByKind(osmt, "Cluster", r.Name) {
		t.Errorf("control plane machine template owners %v", osmt.GetOwnerReferences())
	}
	// The autoscaled node group got its replicas from the min-size
	// annotation, as CAPI's webhook does.
	auto := &clusterv1.MachineDeployment{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-auto"}, auto); err != nil {
		t.Fatal(err)
	}
	if auto.Spec.Replicas == nil || *auto.Spec.Replicas != 1 {
		t.Errorf("autoscaled MachineDeployment replicas %v, want 1", auto.Spec.Replicas)
	}

	start = time.Now()
	r.uninstall(t)
	eventually(t, converge, "the release's objects to be gone", func() error { return releaseGoneErr(ctx, r) })
	t.Logf("gone after %s", time.Since(start).Round(time.Millisecond))
	// Helm keeps the credentials; neither CAPI nor the collector owns them.
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-cloud-credentials"}, &corev1.Secret{}); err != nil {
		t.Errorf("the kept cloud-credentials Secret: %v", err)
	}
}

// releaseGoneErr says what of a release is still there after uninstalling.
func releaseGoneErr(ctx context.Context, r release) error {
	ns := r.Namespace
	for _, obj := range []client.Object{
		&clusterv1.Cluster{}, &controlplanev1.KubeadmControlPlane{},
	} {
		name := r.Name
		if _, ok := obj.(*controlplanev1.KubeadmControlPlane); ok {
			name += "-control-plane"
		}
		obj.SetNamespace(ns)
		obj.SetName(name)
		if err := gone(ctx, obj); err != nil {
			return fmt.Errorf("%T: %w", obj, err)
		}
	}
	for _, gvk := range []schema.GroupVersionKind{
		gvkOSC, gvkOSM, gvkOSMT, gvkHR, gvkMF,
		clusterv1.GroupVersion.WithKind("MachineDeployment"),
		clusterv1.GroupVersion.WithKind("MachineSet"),
		clusterv1.GroupVersion.WithKind("Machine"),
		clusterv1.GroupVersion.WithKind("MachineHealthCheck"),
		bootstrapv1.GroupVersion.WithKind("KubeadmConfig"),
		bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate"),
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if n := len(list.Items); n > 0 {
			return fmt.Errorf("%d %s left, e.g. %s (finalizers %v)", n, gvk.Kind, list.Items[0].GetName(), list.Items[0].GetFinalizers())
		}
	}
	secrets := &corev1.SecretList{}
	if err := env.Client.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: r.Name}); err != nil {
		return err
	}
	if n := len(secrets.Items); n > 0 {
		return fmt.Errorf("%d Secrets of the cluster left, e.g. %s", n, secrets.Items[0].Name)
	}
	return nil
}

// TestLongNames: the longest release name Magnum's naming makes (a name
// cut to 30, '-', 12 characters) with a long node group name: MachineSet
// and Machine names exceed what a label value holds, and the simulator
// must name and label them as CAPI does, or no worker is ever created.
func TestLongNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("a-cluster-name-cut-to-thirty-c-abcdefghijkl", ns)
	r.NodeGroups[0].Name = "default-worker-group"
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })
	r.uninstall(t)
	eventually(t, converge, "the release to be gone", func() error { return releaseGoneErr(ctx, r) })
}
