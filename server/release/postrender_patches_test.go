package release

import (
	"bytes"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestPatchSpec(t *testing.T) {
	lb := SpecPatch{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster",
		Spec: map[string]any{"apiServerLoadBalancer": map[string]any{"flavor": "amphora-ha", "availabilityZone": "az-1"}}}
	renewal := SpecPatch{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane",
		Spec: map[string]any{"rolloutBefore": map[string]any{"certificatesExpiryDays": 21}}}
	renewalV1beta2 := SpecPatch{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane",
		Spec: map[string]any{"rollout": map[string]any{"before": map[string]any{"certificatesExpiryDays": 21}}}}
	tests := []struct {
		name   string
		object string
		want   string // the object's spec after patching
	}{
		{
			name: "merged beside the chart's fields",
			object: `{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackCluster",
				"spec": {"apiServerLoadBalancer": {"enabled": true, "allowedCIDRs": ["10.0.0.0/8"]}, "apiServerPort": 6443}}`,
			want: `{"apiServerLoadBalancer": {"enabled": true, "allowedCIDRs": ["10.0.0.0/8"], "flavor": "amphora-ha", "availabilityZone": "az-1"}, "apiServerPort": 6443}`,
		},
		{
			name:   "a field the chart wrote is replaced",
			object: `{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "spec": {"replicas": 3, "rolloutBefore": {"certificatesExpiryDays": 90}}}`,
			want:   `{"replicas": 3, "rolloutBefore": {"certificatesExpiryDays": 21}}`,
		},
		{
			name:   "the patch of the object's version",
			object: `{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane"}`,
			want:   `{"rollout": {"before": {"certificatesExpiryDays": 21}}}`,
		},
		{
			name:   "a patch without a version: any version",
			object: `{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "OpenStackCluster"}`,
			want:   `{"apiServerLoadBalancer": {"flavor": "amphora-ha", "availabilityZone": "az-1"}}`,
		},
		{
			name:   "another kind is left alone",
			object: `{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackMachineTemplate", "spec": {"template": {}}}`,
			want:   `{"template": {}}`,
		},
		{
			name:   "the same kind of another group is left alone",
			object: `{"apiVersion": "example.com/v1", "kind": "OpenStackCluster", "spec": {}}`,
			want:   `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj, want map[string]any
			if err := yaml.Unmarshal([]byte(tt.object), &obj); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: obj}
			patchSpec(u, []SpecPatch{lb, renewal, renewalV1beta2})
			if got, _ := u.Object["spec"].(map[string]any); !reflect.DeepEqual(normalize(t, got), want) {
				t.Errorf("spec = %v, want %v", got, want)
			}
		})
	}
	if got := lb.Spec["apiServerLoadBalancer"].(map[string]any); len(got) != 2 {
		t.Errorf("patching changed the patch itself: %v", got)
	}
}

// TestDecoratorSpecPatches: through the post-renderer, a patch reaches the
// rendered object and a target with patches alone has a post-renderer.
func TestDecoratorSpecPatches(t *testing.T) {
	target := Target{SpecPatches: []SpecPatch{{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane",
		Spec: map[string]any{"rolloutBefore": map[string]any{"certificatesExpiryDays": 21}}}}}
	pr := target.postRenderer()
	if pr == nil {
		t.Fatal("a target with spec patches has no post-renderer")
	}
	out, err := pr.Run(bytes.NewBufferString("apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata:\n  name: c-control-plane\nspec:\n  replicas: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(bytes.TrimPrefix(out.Bytes(), []byte("---\n")), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": float64(1), "rolloutBefore": map[string]any{"certificatesExpiryDays": float64(21)}}
	if !reflect.DeepEqual(got["spec"], want) {
		t.Errorf("spec = %v, want %v", got["spec"], want)
	}
}

// normalize gives a spec the types YAML decoding gives (float64 numbers).
func normalize(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
