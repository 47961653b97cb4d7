package capisim_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// TestNodeGroupRemoved deletes one MachineDeployment, as helm upgrade does
// when a node group leaves the values: its MachineSets and Machines go
// first, then it; the rest of the cluster stays ready; its templates stay
// (Helm keeps them, the Cluster owns them).
func TestNodeGroupRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("ngremove", ns)
	r.NodeGroups = append(r.NodeGroups, nodeGroupValues{Name: "group-2", Replicas: 2, Version: "v1.29.2", Hash: "bbbb0002", Flavor: "vm.small"})
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })
	mdPhases := record(t, ns, clusterv1.GroupVersion.WithKind("MachineDeployment"), "status", "phase")

	smaller := r
	smaller.NodeGroups = r.NodeGroups[:1]
	smaller.upgrade(t, r)
	md := r.Name + "-group-2"
	eventually(t, converge, "the node group to go", func() error {
		if err := gone(ctx, &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: md}}); err != nil {
			return err
		}
		sets := &clusterv1.MachineSetList{}
		if err := env.Client.List(ctx, sets, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: format.MustFormatValue(md)}); err != nil {
			return err
		}
		if len(sets.Items) > 0 {
			return fmt.Errorf("%d MachineSets of the node group left", len(sets.Items))
		}
		workers := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, workers, client.InNamespace(ns), client.MatchingLabels{"capi.stackhpc.com/node-group": "group-2"}); err != nil {
			return err
		}
		if len(workers.Items) > 0 {
			return fmt.Errorf("%d Machines of the node group left", len(workers.Items))
		}
		return readyErr(ctx, smaller)
	})
	if seen := mdPhases.values(md); !inOrder(seen, "Running", "ScalingDown") {
		t.Errorf("the deleted MachineDeployment's phases %v", seen)
	}
	for _, name := range []string{md + "-bbbb0002"} {
		osmt, err := getU(ctx, gvkOSMT, ns, name)
		if err != nil {
			t.Fatalf("the node group's machine template: %v", err)
		}
		if !ownedByKind(osmt, "Cluster", r.Name) {
			t.Errorf("machine template %s owners %v", name, osmt.GetOwnerReferences())
		}
	}
	c := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, c); err != nil {
		t.Fatal(err)
	}
	if i32(c.Status.Workers.Replicas) != 1 {
		t.Errorf("Cluster workers %+v", c.Status.Workers)
	}
}
