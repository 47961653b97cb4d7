package capisim_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/test/capisim"
)

// configMapRules are the rules the tests of this process keep in the
// simulator's ConfigMap; tests add theirs and remove them when done.
var configMapRules struct {
	sync.Mutex
	byTest map[string][]map[string]any
}

// setConfigMapRules writes the test's rules into the ConfigMap, as a
// Python test outside the process would; nil removes them.
func setConfigMapRules(t *testing.T, rules []map[string]any) {
	t.Helper()
	ctx := context.Background()
	configMapRules.Lock()
	defer configMapRules.Unlock()
	if configMapRules.byTest == nil {
		configMapRules.byTest = map[string][]map[string]any{}
	}
	if rules == nil {
		delete(configMapRules.byTest, t.Name())
	} else {
		configMapRules.byTest[t.Name()] = rules
	}
	var all []map[string]any
	for _, rs := range configMapRules.byTest {
		all = append(all, rs...)
	}
	data, err := yaml.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	key := capisim.DefaultRulesConfigMap
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}
	if err := env.Client.Create(ctx, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err = env.Client.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = map[string]string{capisim.RulesConfigMapKey: string(data)}
		err = env.Client.Create(ctx, cm)
	case err == nil:
		cm.Data = map[string]string{capisim.RulesConfigMapKey: string(data)}
		err = env.Client.Update(ctx, cm)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// holds checks that cond stays true for a number of simulator steps.
func holds(t *testing.T, steps int, what string, cond func() error) {
	t.Helper()
	end := time.Now().Add(time.Duration(steps) * step)
	for time.Now().Before(end) {
		if err := cond(); err != nil {
			t.Fatalf("%s stopped holding: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func setClusterAnnotation(ctx context.Context, t *testing.T, r release, key string, value *string) {
	t.Helper()
	c := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, c); err != nil {
		t.Fatal(err)
	}
	original := c.DeepCopy()
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	if value == nil {
		delete(c.Annotations, key)
	} else {
		c.Annotations[key] = *value
	}
	if err := env.Client.Patch(ctx, c, client.MergeFrom(original)); err != nil {
		t.Fatal(err)
	}
}

// TestInfraFailureShowsAndClears injects CAPO's retrying failure (an
// Octavia quota error) with a Cluster annotation, checks it shows in the
// OpenStackCluster and the Cluster, then clears it.
func TestInfraFailureShowsAndClears(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRelease("quota", newNamespace(t))
	r.ClusterAnnotations[capisim.AnnotationInfraFailure] = ""
	r.install(t)

	failing := func() error {
		osc, err := getU(ctx, gvkOSC, r.Namespace, r.Name)
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedBool(osc.Object, "status", "ready"); ready {
			return errors.New("OpenStackCluster is ready")
		}
		c := capoCond(osc, "Ready")
		if c == nil || c["status"] != "False" || c["reason"] != "OpenStackError" || c["severity"] != "Warning" ||
			!strings.Contains(fmt.Sprint(c["message"]), "Quota has been met for resources: Load Balancer") {
			return fmt.Errorf("OpenStackCluster Ready condition %v", c)
		}
		if c := capoCond(osc, "APIEndpointReady"); c == nil || c["reason"] != "APIEndpointConfigFailed" {
			return fmt.Errorf("OpenStackCluster APIEndpointReady condition %v", c)
		}
		if _, found, _ := unstructured.NestedString(osc.Object, "status", "failureReason"); found {
			return errors.New("a retried failure has no failureReason")
		}
		cluster := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, cluster); err != nil {
			return err
		}
		ir := meta.FindStatusCondition(cluster.Status.Conditions, "InfrastructureReady")
		if ir == nil || ir.Status != metav1.ConditionFalse || ir.Reason != "OpenStackError" || !strings.Contains(ir.Message, "Quota has been met") {
			return fmt.Errorf("Cluster InfrastructureReady %+v", ir)
		}
		if err := condFalse(cluster.Status.Conditions, "Available"); err != nil {
			return err
		}
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, machines, client.InNamespace(r.Namespace)); err != nil {
			return err
		}
		if len(machines.Items) > 0 {
			return fmt.Errorf("%d Machines created without infrastructure", len(machines.Items))
		}
		return nil
	}
	eventually(t, converge, "the quota failure to show", failing)
	holds(t, 10, "the quota failure", failing)

	setClusterAnnotation(ctx, t, r, capisim.AnnotationInfraFailure, nil)
	eventually(t, converge, "the release to be ready once quota is freed", func() error { return readyErr(ctx, r) })
	r.uninstall(t)
	eventually(t, converge, "the release to be gone", func() error { return releaseGoneErr(ctx, r) })
}

// TestTerminalInfraFailureFromConfigMap arranges, through the ConfigMap and
// before the cluster exists, CAPO's terminal failure with a Neutron quota
// message, and checks failureReason and failureMessage reach the Cluster.
func TestTerminalInfraFailureFromConfigMap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	const neutron = `Expected HTTP response code [201 202] when accessing [POST https://neutron.example.test:9696/v2.0/networks], but got 409 instead: {"NeutronError": {"type": "OverQuota", "message": "Quota exceeded for resources: ['network'].", "detail": ""}}`
	setConfigMapRules(t, []map[string]any{{"cluster": "terminal-*", "namespace": ns, "infraFailure": neutron, "infraFailureTerminal": true}})
	t.Cleanup(func() { setConfigMapRules(t, nil) })
	time.Sleep(5 * step) // the simulator reads the ConfigMap through a watch
	r := newRelease("terminal-1", ns)
	r.install(t)
	eventually(t, converge, "the terminal failure to show", func() error {
		osc, err := getU(ctx, gvkOSC, ns, r.Name)
		if err != nil {
			return err
		}
		reason, _, _ := unstructured.NestedString(osc.Object, "status", "failureReason")
		msg, _, _ := unstructured.NestedString(osc.Object, "status", "failureMessage")
		if reason != "UpdateError" || !strings.Contains(msg, "Quota exceeded for resources: ['network']") {
			return fmt.Errorf("OpenStackCluster failureReason %q failureMessage %q", reason, msg)
		}
		if c := capoCond(osc, "Ready"); c == nil || c["severity"] != "Error" {
			return fmt.Errorf("OpenStackCluster Ready condition %v", c)
		}
		// What a reader of the v1beta1 API (the Python driver) sees.
		old := &clusterv1beta1.Cluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, old); err != nil {
			return err
		}
		if old.Status.FailureReason == nil || *old.Status.FailureReason != "UpdateError" ||
			old.Status.FailureMessage == nil || !strings.Contains(*old.Status.FailureMessage, "Kind=OpenStackCluster") {
			return fmt.Errorf("v1beta1 Cluster failureReason %v failureMessage %v", old.Status.FailureReason, old.Status.FailureMessage)
		}
		return nil
	})
	r.uninstall(t)
	eventually(t, converge, "the failed release to be gone", func() error { return releaseGoneErr(ctx, r) })
}

// TestAddonFailureFromGo fails one addon through a Go rule: it ends Failed
// with a failure message while the others deploy; once the rule is gone,
// a change to its spec installs it; a change to another upgrades it.
func TestAddonFailureFromGo(t *testing.T) {
	ctx := context.Background()
	r := newRelease("addonfail", newNamespace(t))
	sim.SetRules(capisim.Rule{Cluster: "addonfail", Faults: capisim.Faults{AddonFailure: "*-ccm-openstack"}})
	t.Cleanup(func() { sim.SetRules() })
	r.install(t)
	ccm := r.Name + "-ccm-openstack"
	eventually(t, converge, "the addon to fail", func() error {
		a, err := getU(ctx, gvkHR, r.Namespace, ccm)
		if err != nil {
			return err
		}
		phase, _, _ := unstructured.NestedString(a.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(a.Object, "status", "failureMessage")
		if phase != "Failed" || !strings.Contains(msg, `chart "openstack-cloud-controller-manager" version "2.36.0" not found`) {
			return fmt.Errorf("%s phase %q failureMessage %q", ccm, phase, msg)
		}
		for _, other := range []string{r.Name + "-cni-calico"} {
			o, err := getU(ctx, gvkHR, r.Namespace, other)
			if err != nil {
				return err
			}
			if p, _, _ := unstructured.NestedString(o.Object, "status", "phase"); p != "Deployed" {
				return fmt.Errorf("%s phase %q", other, p)
			}
		}
		return nil
	})
	holds(t, 5, "the addon failure", func() error {
		a, err := getU(ctx, gvkHR, r.Namespace, ccm)
		if err != nil {
			return err
		}
		if p, _, _ := unstructured.NestedString(a.Object, "status", "phase"); p != "Failed" {
			return fmt.Errorf("phase %q", p)
		}
		return nil
	})

	sim.SetRules()
	calicoPhases := record(t, r.Namespace, gvkHR, "status", "phase")
	fixed := r
	fixed.CalicoVersion = "v3.31.6"
	fixed.upgrade(t, r)
	patchAddonChartVersion(ctx, t, r.Namespace, ccm, "2.36.1")
	eventually(t, converge, "the addons to deploy", func() error {
		for name, rev := range map[string]int64{ccm: 1, r.Name + "-cni-calico": 2} {
			a, err := getU(ctx, gvkHR, r.Namespace, name)
			if err != nil {
				return err
			}
			p, _, _ := unstructured.NestedString(a.Object, "status", "phase")
			got, _, _ := unstructured.NestedInt64(a.Object, "status", "revision")
			if p != "Deployed" || got != rev {
				return fmt.Errorf("%s phase %q revision %d, want Deployed %d", name, p, got, rev)
			}
		}
		return nil
	})
	if seen := calicoPhases.values(r.Name + "-cni-calico"); !inOrder(seen, "Upgrading", "Deployed") {
		t.Errorf("cni-calico phases on upgrade %v", seen)
	}
	if seen := calicoPhases.values(ccm); !inOrder(seen, "Installing", "Deployed") {
		t.Errorf("ccm-openstack phases after the fix %v", seen)
	}
}

func patchAddonChartVersion(ctx context.Context, t *testing.T, ns, name, version string) {
	t.Helper()
	a, err := getU(ctx, gvkHR, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(fmt.Sprintf(`{"spec":{"chart":{"version":%q}}}`, version))
	if err := env.Client.Patch(ctx, a, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// TestStuckRollout rolls new machine templates into a cluster whose
// replacement Machines never become ready: the rollout shows and stays;
// once the fault is cleared it completes.
func TestStuckRollout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRelease("stuck-rollout", newNamespace(t))
	r.NodeGroups[0].Replicas = 2
	r.ClusterAnnotations[capisim.AnnotationStuckRollout] = "true"
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })

	up := r
	up.ControlPlane.Hash, up.ControlPlane.Flavor = "f1a7f1a7", "vm.large"
	up.NodeGroups = []nodeGroupValues{{Name: "group-1", Replicas: 2, Version: r.NodeGroups[0].Version, Hash: "f1a7f1a8", Flavor: "vm.large"}}
	up.upgrade(t, r)
	stuck := func() error {
		kcp := &controlplanev1.KubeadmControlPlane{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name + "-control-plane"}, kcp); err != nil {
			return err
		}
		ks := kcp.Status
		if i32(ks.Replicas) != 2 || i32(ks.ReadyReplicas) != 1 || i32(ks.UpToDateReplicas) != 1 || ks.ObservedGeneration != kcp.Generation {
			return fmt.Errorf("KCP replicas=%d ready=%d upToDate=%d", i32(ks.Replicas), i32(ks.ReadyReplicas), i32(ks.UpToDateReplicas))
		}
		if err := condTrue(ks.Conditions, "RollingOut", "Available"); err != nil {
			return fmt.Errorf("KCP: %w", err)
		}
		md := &clusterv1.MachineDeployment{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name + "-group-1"}, md); err != nil {
			return err
		}
		if i32(md.Status.Replicas) != 2 || i32(md.Status.ReadyReplicas) != 1 || i32(md.Status.UpToDateReplicas) != 1 {
			return fmt.Errorf("MD replicas=%d ready=%d upToDate=%d", i32(md.Status.Replicas), i32(md.Status.ReadyReplicas), i32(md.Status.UpToDateReplicas))
		}
		if err := condTrue(md.Status.Conditions, "RollingOut"); err != nil {
			return fmt.Errorf("MD: %w", err)
		}
		cluster := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, cluster); err != nil {
			return err
		}
		if err := condTrue(cluster.Status.Conditions, "RollingOut"); err != nil {
			return fmt.Errorf("Cluster: %w", err)
		}
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, machines, client.InNamespace(r.Namespace)); err != nil {
			return err
		}
		provisioning := 0
		for _, m := range machines.Items {
			if m.Status.Phase == "Provisioning" {
				provisioning++
			}
		}
		if provisioning != 2 {
			return fmt.Errorf("%d Machines Provisioning, want the 2 replacements", provisioning)
		}
		return nil
	}
	eventually(t, converge, "the rollout to get stuck", stuck)
	holds(t, 15, "the stuck rollout", stuck)

	setClusterAnnotation(ctx, t, r, capisim.AnnotationStuckRollout, nil)
	eventually(t, converge, "the rollout to finish once unstuck", func() error { return readyErr(ctx, up) })
}

// TestStuckDeletion keeps the OpenStackCluster's finalizer (rule from the
// ConfigMap): the Cluster stays, waiting for its infrastructure, after
// everything else went; once the rule is removed it goes.
func TestStuckDeletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	setConfigMapRules(t, []map[string]any{{"cluster": "stuck-deletion", "namespace": ns, "stuckDeletion": true}})
	t.Cleanup(func() { setConfigMapRules(t, nil) })
	r := newRelease("stuck-deletion", ns)
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })
	r.uninstall(t)
	stuck := func() error {
		cluster := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, cluster); err != nil {
			return err
		}
		d := meta.FindStatusCondition(cluster.Status.Conditions, "Deleting")
		if cluster.DeletionTimestamp == nil || cluster.Status.Phase != "Deleting" || d == nil || d.Reason != "WaitingForInfrastructureDeletion" {
			return fmt.Errorf("Cluster phase %q Deleting %+v", cluster.Status.Phase, d)
		}
		osc, err := getU(ctx, gvkOSC, ns, r.Name)
		if err != nil {
			return err
		}
		if osc.GetDeletionTimestamp() == nil || !controllerutilContains(osc.GetFinalizers(), "openstackcluster.infrastructure.cluster.x-k8s.io") {
			return fmt.Errorf("OpenStackCluster deletionTimestamp %v finalizers %v", osc.GetDeletionTimestamp(), osc.GetFinalizers())
		}
		if c := capoCond(osc, "Ready"); c == nil || !strings.Contains(fmt.Sprint(c["message"]), "NetworkInUse") {
			return fmt.Errorf("OpenStackCluster Ready condition %v", c)
		}
		if err := gone(ctx, &controlplanev1.KubeadmControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.Name + "-control-plane"}}); err != nil {
			return err
		}
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(ctx, machines, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(machines.Items) > 0 {
			return fmt.Errorf("%d Machines left", len(machines.Items))
		}
		return nil
	}
	eventually(t, converge, "the deletion to get stuck", stuck)
	holds(t, 15, "the stuck deletion", stuck)

	setConfigMapRules(t, nil)
	eventually(t, converge, "the release to be gone once unstuck", func() error { return releaseGoneErr(ctx, r) })
}
