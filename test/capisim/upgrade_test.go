package capisim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// rolloutObservations are what polling saw while a rollout ran.
type rolloutObservations struct {
	kcpRollingOut, mdRollingOut, clusterRollingOut, workersBlocked bool
	maxControlPlane, minWorkers                                    int
}

func (o rolloutObservations) String() string {
	return fmt.Sprintf("%+v", struct {
		KCPRollingOut, MDRollingOut, ClusterRollingOut, WorkersBlocked bool
		MaxControlPlane, MinWorkers                                    int
	}{o.kcpRollingOut, o.mdRollingOut, o.clusterRollingOut, o.workersBlocked, o.maxControlPlane, o.minWorkers})
}

// observeRollout polls the release until done returns nil, noting what the
// statuses showed on the way.
func observeRollout(ctx context.Context, t *testing.T, r release, done func() error) rolloutObservations {
	t.Helper()
	o := rolloutObservations{minWorkers: 1 << 30}
	ns := r.Namespace
	md := r.Name + "-" + r.NodeGroups[0].Name
	deadline := time.Now().Add(converge)
	for {
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-control-plane"}, kcp); err == nil {
			if c := meta.FindStatusCondition(kcp.Status.Conditions, "RollingOut"); c != nil && c.Status == "True" &&
				kcp.Status.ObservedGeneration == kcp.Generation && i32(kcp.Status.UpToDateReplicas) < i32(kcp.Status.Replicas) {
				o.kcpRollingOut = true
			}
		}
		d := &clusterv1.MachineDeployment{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: md}, d); err == nil {
			if c := meta.FindStatusCondition(d.Status.Conditions, "RollingOut"); c != nil && c.Status == "True" && i32(d.Status.UpToDateReplicas) < i32(d.Spec.Replicas) {
				o.mdRollingOut = true
			}
			if c := meta.FindStatusCondition(d.Status.Conditions, "ScalingUp"); c != nil && strings.Contains(c.Message, "preflight check failed") {
				o.workersBlocked = true
			}
		}
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, c); err == nil {
			if cond := meta.FindStatusCondition(c.Status.Conditions, "RollingOut"); cond != nil && cond.Status == "True" {
				o.clusterRollingOut = true
			}
		}
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: r.Name}); err == nil {
			cp, workers := 0, 0
			for _, m := range machines.Items {
				if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
					cp++
				} else if m.DeletionTimestamp == nil && meta.IsStatusConditionTrue(m.Status.Conditions, "Ready") {
					workers++
				}
			}
			o.maxControlPlane = max(o.maxControlPlane, cp)
			o.minWorkers = min(o.minWorkers, workers)
		}
		err := done()
		if err == nil {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("rollout not done after %s: %v; saw %s", converge, err, o)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUpgradeRollsEveryMachine upgrades Kubernetes and the machine
// templates (new template names, as the chart makes them) and checks that
// every Machine is replaced, one at a time, with the statuses showing it.
func TestUpgradeRollsEveryMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("upgrade", ns)
	r.ControlPlane.Replicas = 3
	r.NodeGroups[0].Replicas = 2
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })
	old := map[string]bool{}
	list := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, m := range list.Items {
		old[m.Name] = true
	}

	up := r
	up.ControlPlane = controlPlaneValues{Replicas: 3, Version: "v1.30.1", Hash: "c0ffee01", Flavor: "vm.medium"}
	up.NodeGroups = []nodeGroupValues{{Name: "group-1", Replicas: 2, Version: "v1.30.1", Hash: "c0ffee02", Flavor: "vm.medium"}}
	up.upgrade(t, r)
	seen := observeRollout(ctx, t, up, func() error {
		if err := readyErr(ctx, up); err != nil {
			return err
		}
		return noneOf(ctx, ns, old)
	})
	t.Logf("during the rollout: %s", seen)
	// RollingOut is only counted when observedGeneration has caught up with
	// the new generation, so it is the new spec's status that shows it.
	if !seen.kcpRollingOut || !seen.mdRollingOut || !seen.clusterRollingOut {
		t.Errorf("the statuses did not show the rollout: %s", seen)
	}
	// KCP surges one Machine; the node group (maxSurge 0, maxUnavailable 1)
	// goes down by one at most; its new Machines wait for the control
	// plane's upgrade (kubeadm's version skew preflight check).
	if seen.maxControlPlane != 4 || seen.minWorkers < 1 || !seen.workersBlocked {
		t.Errorf("rollout limits: %s", seen)
	}
	osms := &unstructured.UnstructuredList{}
	osms.SetGroupVersionKind(gvkOSM.GroupVersion().WithKind("OpenStackMachineList"))
	if err := env.Client.List(ctx, osms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, o := range osms.Items {
		from := o.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation]
		if from != r.Name+"-control-plane-c0ffee01" && from != r.Name+"-group-1-c0ffee02" {
			t.Errorf("OpenStackMachine %s cloned from %q", o.GetName(), from)
		}
	}
}

// noneOf says which of the named Machines still exist.
func noneOf(ctx context.Context, ns string, names map[string]bool) error {
	list := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	for _, m := range list.Items {
		if names[m.Name] {
			return fmt.Errorf("old Machine %s is still there", m.Name)
		}
	}
	return nil
}
