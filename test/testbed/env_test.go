package testbed

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"
)

var env *Env

func TestMain(m *testing.M) {
	if os.Getenv(orphanChildEnv) != "" {
		runOrphanChild() // never returns
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	var err error
	env, err = Start(ctx, Options{})
	cancel()
	if err != nil {
		panic(err)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		panic(err)
	}
	os.Exit(code)
}

// TestCRDsEstablished checks every CRD the driver depends on is served.
func TestCRDsEstablished(t *testing.T) {
	want := []string{
		"clusters.cluster.x-k8s.io",
		"machinedeployments.cluster.x-k8s.io",
		"machines.cluster.x-k8s.io",
		"machinehealthchecks.cluster.x-k8s.io",
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
		"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io",
		"openstackclusters.infrastructure.cluster.x-k8s.io",
		"openstackmachinetemplates.infrastructure.cluster.x-k8s.io",
		"openstackmachines.infrastructure.cluster.x-k8s.io",
		"helmreleases.addons.stackhpc.com",
		"manifests.addons.stackhpc.com",
	}
	ctx := context.Background()
	for _, name := range want {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		if !established(&crd) {
			t.Errorf("CRD %s is not Established: %+v", name, crd.Status.Conditions)
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestCAPICRDsConvertThroughWebhook checks the CAPI CRDs are wired to the
// conversion webhook and the provider CRDs are left alone.
func TestCAPICRDsConvertThroughWebhook(t *testing.T) {
	ctx := context.Background()
	for name, wantWebhook := range map[string]bool{
		"clusters.cluster.x-k8s.io":                          true,
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io": true,
		"kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io":  true,
		"openstackclusters.infrastructure.cluster.x-k8s.io":  false,
		"helmreleases.addons.stackhpc.com":                   false,
	} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Fatal(err)
		}
		got := crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
		if got != wantWebhook {
			t.Errorf("%s: conversion webhook = %v, want %v", name, got, wantWebhook)
		}
	}
}

// v1beta1Cluster is a Cluster as the openstack-cluster chart writes it.
const v1beta1Cluster = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: roundtrip
  namespace: %s
  labels:
    capi.stackhpc.com/cluster: roundtrip
spec:
  paused: false
  clusterNetwork:
    pods:
      cidrBlocks: [172.16.0.0/13]
    services:
      cidrBlocks: [172.24.0.0/13]
    serviceDomain: cluster.local
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    name: roundtrip-control-plane
    namespace: %s
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: OpenStackCluster
    name: roundtrip
    namespace: %s
`

// TestV1beta1ClusterRoundTrip writes a Cluster as v1beta1 and reads it back as
// v1beta2 and as v1beta1. Without conversion the API server prunes
// controlPlaneRef.apiVersion; with CAPI's conversion it becomes apiGroup.
func TestV1beta1ClusterRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	obj := &unstructured.Unstructured{}
	doc := []byte(sprintf(v1beta1Cluster, ns, ns, ns))
	if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("creating a v1beta1 Cluster: %v", err)
	}

	var hub clusterv1.Cluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "roundtrip"}, &hub); err != nil {
		t.Fatal(err)
	}
	if got, want := hub.Spec.ControlPlaneRef, (clusterv1.ContractVersionedObjectReference{
		APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "roundtrip-control-plane",
	}); got != want {
		t.Errorf("v1beta2 controlPlaneRef = %+v, want %+v", got, want)
	}
	if got, want := hub.Spec.InfrastructureRef, (clusterv1.ContractVersionedObjectReference{
		APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster", Name: "roundtrip",
	}); got != want {
		t.Errorf("v1beta2 infrastructureRef = %+v, want %+v", got, want)
	}
	if got := hub.Spec.ClusterNetwork.Pods.CIDRBlocks; len(got) != 1 || got[0] != "172.16.0.0/13" {
		t.Errorf("v1beta2 pods cidrBlocks = %v", got)
	}
	// CAPI maps v1beta1's plain false to an unset *bool; both mean "not paused".
	if hub.Spec.Paused != nil && *hub.Spec.Paused {
		t.Errorf("v1beta2 paused = %v, want unset or false", *hub.Spec.Paused)
	}

	var spoke clusterv1beta1.Cluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "roundtrip"}, &spoke); err != nil {
		t.Fatal(err)
	}
	ref := spoke.Spec.ControlPlaneRef
	if ref == nil || ref.Kind != "KubeadmControlPlane" || ref.Name != "roundtrip-control-plane" || ref.Namespace != ns ||
		ref.GroupVersionKind().Group != "controlplane.cluster.x-k8s.io" {
		t.Errorf("v1beta1 controlPlaneRef = %+v", ref)
	}
	if spoke.Spec.ClusterNetwork == nil || spoke.Spec.ClusterNetwork.ServiceDomain != "cluster.local" {
		t.Errorf("v1beta1 clusterNetwork = %+v", spoke.Spec.ClusterNetwork)
	}
}

// TestV1beta1KubeadmControlPlaneRoundTrip covers the biggest object the chart
// writes: kubeadm extraArgs maps become v1beta2 lists and come back as maps.
func TestV1beta1KubeadmControlPlaneRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	kcp := &controlplanev1beta1.KubeadmControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rt-control-plane"},
		Spec: controlplanev1beta1.KubeadmControlPlaneSpec{
			Replicas: ptr(int32(3)),
			Version:  "v1.33.2",
			MachineTemplate: controlplanev1beta1.KubeadmControlPlaneMachineTemplate{
				InfrastructureRef: corev1.ObjectReference{
					APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "OpenStackMachineTemplate", Name: "rt-cp-abcd1234", Namespace: ns,
				},
			},
		},
	}
	kcp.Spec.KubeadmConfigSpec.ClusterConfiguration = &bootstrapClusterConfiguration
	if err := env.Client.Create(ctx, kcp); err != nil {
		t.Fatalf("creating a v1beta1 KubeadmControlPlane: %v", err)
	}
	var hub controlplanev1.KubeadmControlPlane
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kcp), &hub); err != nil {
		t.Fatal(err)
	}
	if hub.Spec.MachineTemplate.Spec.InfrastructureRef.APIGroup != "infrastructure.cluster.x-k8s.io" {
		t.Errorf("v1beta2 infrastructureRef = %+v", hub.Spec.MachineTemplate.Spec.InfrastructureRef)
	}
	args := hub.Spec.KubeadmConfigSpec.ClusterConfiguration.ControllerManager.ExtraArgs
	if len(args) != 1 || args[0].Name != "cloud-provider" || args[0].Value == nil || *args[0].Value != "external" {
		t.Errorf("v1beta2 controllerManager extraArgs = %+v", args)
	}
	var back controlplanev1beta1.KubeadmControlPlane
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kcp), &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Spec.KubeadmConfigSpec.ClusterConfiguration.ControllerManager.ExtraArgs["cloud-provider"]; got != "external" {
		t.Errorf("v1beta1 controllerManager extraArgs = %v", back.Spec.KubeadmConfigSpec.ClusterConfiguration.ControllerManager.ExtraArgs)
	}
}
