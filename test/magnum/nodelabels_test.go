package magnum

import (
	"context"
	"reflect"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/harness"
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
	got, err := harness.JoinRegistration(ctx, l.Cloud.H.Env.Client, l.Namespace(), stackID, group)
	if err != nil {
		t.Fatal(err)
	}
	want := harness.NodeRegistration{Labels: labels, Taints: []any{map[string]any{"key": key, "value": value, "effect": effect}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Magnum %d: node group %s: kubelet node-labels %q taints %v, want %q %v",
			l.Release.Major, group, got.Labels, got.Taints, want.Labels, want.Taints)
	}
}
