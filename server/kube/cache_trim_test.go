package kube

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestTrimForStatus: the cache keeps what status reads and drops the bulk.
func TestTrimForStatus(t *testing.T) {
	identity := func(in any) (any, error) { return in, nil }
	trim := trimForStatus(identity)

	kcp := &controlplanev1.KubeadmControlPlane{}
	kcp.Name = "demo-control-plane"
	kcp.Spec.Version, kcp.Spec.Replicas = "v1.33.2", ptr.To[int32](3)
	kcp.Spec.KubeadmConfigSpec.Files = []bootstrapv1.File{{Path: "/etc/big", Content: "lots of bytes"}}
	kcp.Spec.KubeadmConfigSpec.PreKubeadmCommands = []string{"echo hi"}
	kcp.Status.Version = "v1.33.2"
	out, err := trim(kcp)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*controlplanev1.KubeadmControlPlane)
	if !reflect.DeepEqual(got.Spec.KubeadmConfigSpec, bootstrapv1.KubeadmConfigSpec{}) {
		t.Errorf("kubeadm configuration kept: %+v", got.Spec.KubeadmConfigSpec)
	}
	if got.Name != "demo-control-plane" || got.Spec.Version != "v1.33.2" || *got.Spec.Replicas != 3 || got.Status.Version != "v1.33.2" {
		t.Errorf("what status reads was lost: %+v", got)
	}

	for _, tc := range []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{"helm release", map[string]any{
			"apiVersion": "addons.stackhpc.com/v1alpha1", "kind": "HelmRelease",
			"metadata": map[string]any{"name": "demo-cni-calico", "labels": map[string]any{"capi.stackhpc.com/cluster": "demo"}},
			"spec":     map[string]any{"clusterName": "demo", "targetNamespace": "tigera", "values": map[string]any{"huge": "yes"}},
			"status":   map[string]any{"phase": "Failed", "failureMessage": "chart not found", "resources": []any{"a", "b"}, "notes": "long"},
		}, map[string]any{
			"apiVersion": "addons.stackhpc.com/v1alpha1", "kind": "HelmRelease",
			"metadata": map[string]any{"name": "demo-cni-calico", "labels": map[string]any{"capi.stackhpc.com/cluster": "demo"}},
			"spec":     map[string]any{"clusterName": "demo"},
			"status":   map[string]any{"phase": "Failed", "failureMessage": "chart not found"},
		}},
		{"manifests without status yet", map[string]any{
			"apiVersion": "addons.stackhpc.com/v1alpha1", "kind": "Manifests",
			"metadata": map[string]any{"name": "demo-cloud-config"},
			"spec":     map[string]any{"clusterName": "demo", "manifestSources": []any{"x"}},
		}, map[string]any{
			"apiVersion": "addons.stackhpc.com/v1alpha1", "kind": "Manifests",
			"metadata": map[string]any{"name": "demo-cloud-config"},
			"spec":     map[string]any{"clusterName": "demo"},
		}},
		{"not an addon: untouched", map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackCluster",
			"metadata": map[string]any{"name": "demo"},
			"spec":     map[string]any{"managedSubnets": []any{"10.0.0.0/24"}},
			"status":   map[string]any{"ready": true, "network": map[string]any{"id": "n"}},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == nil {
				want = (&unstructured.Unstructured{Object: tc.in}).DeepCopy().Object
			}
			out, err := trim(&unstructured.Unstructured{Object: tc.in})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*unstructured.Unstructured).Object; !reflect.DeepEqual(got, want) {
				t.Errorf("got %v\nwant %v", got, want)
			}
		})
	}

	// Other kinds pass through.
	m := &clusterv1.Machine{}
	m.Spec.Version = "v1.33.2"
	if out, _ := trim(m); out.(*clusterv1.Machine).Spec.Version != "v1.33.2" {
		t.Error("a Machine was changed")
	}
}
