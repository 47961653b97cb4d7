package magnum

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// laneStackID is a cluster's stack_id from `coe cluster show` fields.
func laneStackID(t *testing.T, l *Lane, fields map[string]any) string {
	t.Helper()
	if stackID := StackID(fields); stackID != "" {
		return stackID
	}
	// Magnum 23's API (1.13) calls it cluster_id, which Debian 12's
	// magnumclient (API 1.10) does not know: it shows stack_id empty.
	// The operator reads it from Magnum's database.
	out, err := l.SQL(context.Background(), "SELECT stack_id FROM cluster WHERE uuid='"+fields["uuid"].(string)+"'")
	if err != nil || out == "" {
		t.Fatalf("no stack_id for cluster %v: %q %v", fields["name"], out, err)
	}
	return out
}

// checkNodeRegistration reads the KubeadmConfigTemplate a node group's
// MachineDeployment uses and checks kubelet's node labels and the one taint
// the node group was given.
func checkNodeRegistration(ctx context.Context, t *testing.T, l *Lane, stackID, group, labels, key, value, effect string) {
	t.Helper()
	kc, ns := l.Cloud.H.Env.Client, l.Namespace()
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineDeployment"})
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + "-" + group}, md); err != nil {
		t.Fatalf("MachineDeployment of node group %s: %v", group, err)
	}
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigTemplate"})
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref}, tmpl); err != nil {
		t.Fatalf("KubeadmConfigTemplate %q of node group %s: %v", ref, group, err)
	}
	path := []string{"spec", "template", "spec", "joinConfiguration", "nodeRegistration"}
	gotLabels, _, _ := unstructured.NestedString(tmpl.Object, append(path, "kubeletExtraArgs", "node-labels")...)
	gotTaints, _, _ := unstructured.NestedSlice(tmpl.Object, append(path, "taints")...)
	wantTaints := []any{map[string]any{"key": key, "value": value, "effect": effect}}
	if gotLabels != labels || !reflect.DeepEqual(gotTaints, wantTaints) {
		t.Errorf("Magnum %d: node group %s: kubelet node-labels %q taints %v, want %q %v",
			l.Release.Major, group, gotLabels, gotTaints, labels, wantTaints)
	}
}
