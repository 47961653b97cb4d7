package capisim_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// TestResizeRemovesAnnotatedMachine scales a node group down after
// annotating one of its Machines cluster.x-k8s.io/delete-machine (how the
// driver honours Magnum's nodes_to_remove): that Machine goes, the others
// stay; then scales it up again.
func TestResizeRemovesAnnotatedMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("resize", ns)
	r.NodeGroups[0].Replicas = 3
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })

	md := r.Name + "-" + r.NodeGroups[0].Name
	before := workerNames(ctx, t, ns, md)
	if len(before) != 3 {
		t.Fatalf("workers %v", before)
	}
	// Not the newest one, which the default order would pick anyway.
	victim := before[0]
	m := &clusterv1.Machine{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: victim}, m); err != nil {
		t.Fatal(err)
	}
	original := m.DeepCopy()
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[clusterv1.DeleteMachineAnnotation] = "yes"
	if err := env.Client.Patch(ctx, m, client.MergeFrom(original)); err != nil {
		t.Fatal(err)
	}

	smaller := r
	smaller.NodeGroups = append([]nodeGroupValues(nil), r.NodeGroups...)
	smaller.NodeGroups[0].Replicas = 2
	smaller.upgrade(t, r)
	eventually(t, converge, "the node group to shrink", func() error {
		if err := readyErr(ctx, smaller); err != nil {
			return err
		}
		after := workerNames(ctx, t, ns, md)
		for _, n := range after {
			if n == victim {
				return fmt.Errorf("the annotated Machine %s is still there", victim)
			}
		}
		return nil
	})
	after := workerNames(ctx, t, ns, md)
	for _, n := range before[1:] {
		if !contains(after, n) {
			t.Errorf("Machine %s was removed, only %s was asked for; now %v", n, victim, after)
		}
	}

	smaller.upgrade(t, smaller) // no-op upgrade: nothing moves
	r.upgrade(t, smaller)
	eventually(t, converge, "the node group to grow back", func() error { return readyErr(ctx, r) })
	if got := workerNames(ctx, t, ns, md); len(got) != 3 {
		t.Errorf("workers after growing %v", got)
	}
}

// workerNames lists the Machines of a MachineDeployment, oldest first.
func workerNames(ctx context.Context, t *testing.T, ns, md string) []string {
	t.Helper()
	list := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: format.MustFormatValue(md)}); err != nil {
		t.Fatal(err)
	}
	ms := make([]*clusterv1.Machine, 0, len(list.Items))
	for i := range list.Items {
		ms = append(ms, &list.Items[i])
	}
	sortByCreation(ms)
	names := make([]string, 0, len(ms))
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

func sortByCreation(ms []*clusterv1.Machine) {
	sort.SliceStable(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
