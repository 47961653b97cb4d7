package capisim_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/labels/format"
)

// The documentation ranges the simulator takes floating IPs from.
var floatingRanges = []netip.Prefix{
	netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("192.0.2.0/24"),
}

func condTrue(conds []metav1.Condition, types ...string) error {
	for _, t := range types {
		c := meta.FindStatusCondition(conds, t)
		if c == nil {
			return fmt.Errorf("condition %s missing", t)
		}
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %s is %s (%s): %s", t, c.Status, c.Reason, c.Message)
		}
	}
	return nil
}

func condFalse(conds []metav1.Condition, types ...string) error {
	for _, t := range types {
		c := meta.FindStatusCondition(conds, t)
		if c == nil {
			return fmt.Errorf("condition %s missing", t)
		}
		if c.Status != metav1.ConditionFalse {
			return fmt.Errorf("condition %s is %s (%s), want False: %s", t, c.Status, c.Reason, c.Message)
		}
	}
	return nil
}

// v1beta1True checks conditions of the deprecated v1beta1 list.
func v1beta1True(conds clusterv1.Conditions, types ...clusterv1.ConditionType) error {
	for _, t := range types {
		found := false
		for _, c := range conds {
			if c.Type == t {
				found = true
				if c.Status != corev1.ConditionTrue {
					return fmt.Errorf("v1beta1 condition %s is %s (%s): %s", t, c.Status, c.Reason, c.Message)
				}
			}
		}
		if !found {
			return fmt.Errorf("v1beta1 condition %s missing", t)
		}
	}
	return nil
}

func i32(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

// desiredWorkers returns what a node group's MachineDeployment should end
// up with.
func desiredWorkers(ng nodeGroupValues) int32 {
	if ng.Autoscale {
		return int32(ng.Min)
	}
	return int32(ng.Replicas)
}

// readyErr checks that every object of the release reached the state the
// real controllers would leave it in once all is ready, and says what is not.
func readyErr(ctx context.Context, r release) error {
	c := env.Client
	ns := r.Namespace

	// OpenStackCluster.
	osc, err := getU(ctx, gvkOSC, ns, r.Name)
	if err != nil {
		return err
	}
	if ready, _, _ := unstructured.NestedBool(osc.Object, "status", "ready"); !ready {
		return fmt.Errorf("OpenStackCluster not ready: %v", osc.Object["status"])
	}
	if p, _, _ := unstructured.NestedBool(osc.Object, "status", "initialization", "provisioned"); !p {
		return fmt.Errorf("OpenStackCluster not provisioned")
	}
	for _, f := range []string{"network", "externalNetwork", "apiServerLoadBalancer", "router"} {
		if _, ok, _ := unstructured.NestedMap(osc.Object, "status", f); !ok {
			return fmt.Errorf("OpenStackCluster status.%s missing", f)
		}
	}
	host, _, _ := unstructured.NestedString(osc.Object, "spec", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(osc.Object, "spec", "controlPlaneEndpoint", "port")
	ip, err := netip.ParseAddr(host)
	if err != nil || port != 6443 || !inFloatingRanges(ip) {
		return fmt.Errorf("OpenStackCluster endpoint %s:%d is not a floating IP on 6443", host, port)
	}
	if !controllerutilContains(osc.GetFinalizers(), "openstackcluster.infrastructure.cluster.x-k8s.io") {
		return fmt.Errorf("OpenStackCluster finalizers %v", osc.GetFinalizers())
	}
	for _, t := range []string{"Ready", "NetworkReady", "RouterReady", "SecurityGroupsReady", "APIEndpointReady"} {
		if !capoCondTrue(osc, t) {
			return fmt.Errorf("OpenStackCluster condition %s not True: %v", t, osc.Object["status"])
		}
	}

	// Cluster.
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, cluster); err != nil {
		return err
	}
	st := cluster.Status
	if cluster.Spec.ControlPlaneEndpoint.Host != host || cluster.Spec.ControlPlaneEndpoint.Port != 6443 {
		return fmt.Errorf("Cluster endpoint %v, want %s:6443", cluster.Spec.ControlPlaneEndpoint, host)
	}
	if st.ObservedGeneration != cluster.Generation {
		return fmt.Errorf("Cluster observedGeneration %d, generation %d", st.ObservedGeneration, cluster.Generation)
	}
	if st.Initialization.InfrastructureProvisioned == nil || !*st.Initialization.InfrastructureProvisioned ||
		st.Initialization.ControlPlaneInitialized == nil || !*st.Initialization.ControlPlaneInitialized {
		return fmt.Errorf("Cluster initialization %+v", st.Initialization)
	}
	if st.Phase != "Provisioned" {
		return fmt.Errorf("Cluster phase %q", st.Phase)
	}
	if err := condTrue(st.Conditions, "Available", "InfrastructureReady", "ControlPlaneInitialized", "ControlPlaneAvailable",
		"WorkersAvailable", "RemoteConnectionProbe", "ControlPlaneMachinesReady", "WorkerMachinesReady",
		"ControlPlaneMachinesUpToDate", "WorkerMachinesUpToDate"); err != nil {
		return fmt.Errorf("Cluster: %w", err)
	}
	if err := condFalse(st.Conditions, "RollingOut", "ScalingUp", "ScalingDown", "Remediating", "Deleting", "Paused"); err != nil {
		return fmt.Errorf("Cluster: %w", err)
	}
	if st.Deprecated == nil || st.Deprecated.V1Beta1 == nil {
		return fmt.Errorf("Cluster has no deprecated v1beta1 status")
	}
	if err := v1beta1True(st.Deprecated.V1Beta1.Conditions, "Ready", "InfrastructureReady", "ControlPlaneReady", "ControlPlaneInitialized"); err != nil {
		return fmt.Errorf("Cluster: %w", err)
	}
	if i32(st.ControlPlane.Replicas) != int32(r.ControlPlane.Replicas) || i32(st.ControlPlane.ReadyReplicas) != int32(r.ControlPlane.Replicas) {
		return fmt.Errorf("Cluster control plane counters %+v", st.ControlPlane)
	}
	var workers int32
	for _, ng := range r.NodeGroups {
		workers += desiredWorkers(ng)
	}
	if i32(st.Workers.Replicas) != workers || i32(st.Workers.AvailableReplicas) != workers || i32(st.Workers.UpToDateReplicas) != workers {
		return fmt.Errorf("Cluster workers %+v, want %d", st.Workers, workers)
	}
	// The v1beta1 view, through CAPI's conversion (what the Python driver reads).
	old := &clusterv1beta1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name}, old); err != nil {
		return err
	}
	for _, want := range []clusterv1beta1.ConditionType{"Ready", "InfrastructureReady", "ControlPlaneReady"} {
		found := false
		for _, cond := range old.Status.Conditions {
			if cond.Type == want && cond.Status == corev1.ConditionTrue {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("v1beta1 Cluster condition %s not True: %+v", want, old.Status.Conditions)
		}
	}

	// KubeadmControlPlane.
	kcp := &controlplanev1.KubeadmControlPlane{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-control-plane"}, kcp); err != nil {
		return err
	}
	want := int32(r.ControlPlane.Replicas)
	ks := kcp.Status
	if i32(ks.Replicas) != want || i32(ks.ReadyReplicas) != want || i32(ks.AvailableReplicas) != want || i32(ks.UpToDateReplicas) != want {
		return fmt.Errorf("KCP counters replicas=%d ready=%d available=%d upToDate=%d, want %d",
			i32(ks.Replicas), i32(ks.ReadyReplicas), i32(ks.AvailableReplicas), i32(ks.UpToDateReplicas), want)
	}
	if ks.Version != r.ControlPlane.Version { //nolint:staticcheck // the deprecated field is what the Python driver reads
		return fmt.Errorf("KCP version %q, want %q", ks.Version, r.ControlPlane.Version) //nolint:staticcheck
	}
	if ks.ObservedGeneration != kcp.Generation || ks.Initialization.ControlPlaneInitialized == nil || !*ks.Initialization.ControlPlaneInitialized {
		return fmt.Errorf("KCP observedGeneration %d/%d, initialization %+v", ks.ObservedGeneration, kcp.Generation, ks.Initialization)
	}
	if err := condTrue(ks.Conditions, "Available", "Initialized", "CertificatesAvailable", "EtcdClusterHealthy",
		"ControlPlaneComponentsHealthy", "MachinesReady", "MachinesUpToDate"); err != nil {
		return fmt.Errorf("KCP: %w", err)
	}
	if err := condFalse(ks.Conditions, "RollingOut", "ScalingUp", "ScalingDown", "Deleting"); err != nil {
		return fmt.Errorf("KCP: %w", err)
	}
	if ks.Deprecated == nil || ks.Deprecated.V1Beta1 == nil {
		return fmt.Errorf("KCP has no deprecated v1beta1 status")
	}
	if err := v1beta1True(ks.Deprecated.V1Beta1.Conditions, "Ready", "MachinesReady", "EtcdClusterHealthy", "ControlPlaneComponentsHealthy", "Available"); err != nil {
		return fmt.Errorf("KCP: %w", err)
	}
	if ks.Deprecated.V1Beta1.UpdatedReplicas != want || ks.Deprecated.V1Beta1.ReadyReplicas != want {
		return fmt.Errorf("KCP deprecated counters %+v", ks.Deprecated.V1Beta1)
	}
	if err := machinesReadyErr(ctx, r, ns, client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: kcp.Name}, int(want), r.ControlPlane.Version,
		map[string]string{"capi.stackhpc.com/cluster": r.Name, "capi.stackhpc.com/component": "control-plane", clusterv1.MachineControlPlaneLabel: ""}); err != nil {
		return err
	}

	// MachineDeployments.
	for _, ng := range r.NodeGroups {
		md := &clusterv1.MachineDeployment{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-" + ng.Name}, md); err != nil {
			return err
		}
		want := desiredWorkers(ng)
		ms := md.Status
		if i32(md.Spec.Replicas) != want || i32(ms.Replicas) != want || i32(ms.ReadyReplicas) != want ||
			i32(ms.AvailableReplicas) != want || i32(ms.UpToDateReplicas) != want {
			return fmt.Errorf("MD %s spec.replicas=%d replicas=%d ready=%d available=%d upToDate=%d, want %d", md.Name,
				i32(md.Spec.Replicas), i32(ms.Replicas), i32(ms.ReadyReplicas), i32(ms.AvailableReplicas), i32(ms.UpToDateReplicas), want)
		}
		if ms.Phase != "Running" || ms.ObservedGeneration != md.Generation {
			return fmt.Errorf("MD %s phase %q observedGeneration %d/%d", md.Name, ms.Phase, ms.ObservedGeneration, md.Generation)
		}
		if err := condTrue(ms.Conditions, "Available", "MachinesReady", "MachinesUpToDate"); err != nil {
			return fmt.Errorf("MD %s: %w", md.Name, err)
		}
		if err := condFalse(ms.Conditions, "RollingOut", "ScalingUp", "ScalingDown", "Deleting"); err != nil {
			return fmt.Errorf("MD %s: %w", md.Name, err)
		}
		if ms.Deprecated == nil || ms.Deprecated.V1Beta1 == nil || v1beta1True(ms.Deprecated.V1Beta1.Conditions, "Ready", "Available") != nil {
			return fmt.Errorf("MD %s deprecated v1beta1 status %+v", md.Name, ms.Deprecated)
		}
		if err := machinesReadyErr(ctx, r, ns, client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: format.MustFormatValue(md.Name)}, int(want), ng.Version,
			map[string]string{"capi.stackhpc.com/cluster": r.Name, "capi.stackhpc.com/component": "worker", "capi.stackhpc.com/node-group": ng.Name}); err != nil {
			return err
		}
	}

	// Addons.
	for _, a := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{gvkHR, r.Name + "-cni-calico"}, {gvkHR, r.Name + "-ccm-openstack"}, {gvkMF, r.Name + "-cloud-config"}} {
		addon, err := getU(ctx, a.gvk, ns, a.name)
		if err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(addon.Object, "status", "phase"); phase != "Deployed" {
			return fmt.Errorf("%s phase %q", a.name, phase)
		}
		if rev, _, _ := unstructured.NestedInt64(addon.Object, "status", "revision"); rev < 1 {
			return fmt.Errorf("%s revision %d", a.name, rev)
		}
		if addon.GetLabels()["addons.stackhpc.com/cluster"] != r.Name {
			return fmt.Errorf("%s labels %v", a.name, addon.GetLabels())
		}
		if !controllerutilContains(addon.GetFinalizers(), "addons.stackhpc.com/finalizer") || !ownedByKind(addon, "Cluster", r.Name) {
			return fmt.Errorf("%s finalizers %v owners %v", a.name, addon.GetFinalizers(), addon.GetOwnerReferences())
		}
	}

	// The kubeconfig Secret CAPI writes.
	kubeconfig := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-kubeconfig"}, kubeconfig); err != nil {
		return err
	}
	if !strings.Contains(string(kubeconfig.Data["value"]), "https://"+host+":6443") {
		return fmt.Errorf("kubeconfig does not point at %s:6443", host)
	}
	return nil
}

// machinesReadyErr checks the Machines of one owner.
func machinesReadyErr(ctx context.Context, r release, ns string, sel client.MatchingLabels, want int, version string, labels map[string]string) error {
	machines := &clusterv1.MachineList{}
	if err := env.Client.List(ctx, machines, client.InNamespace(ns), sel); err != nil {
		return err
	}
	if len(machines.Items) != want {
		return fmt.Errorf("%d Machines with %v, want %d", len(machines.Items), sel, want)
	}
	for _, m := range machines.Items {
		if m.Status.Phase != "Running" || !m.Status.NodeRef.IsDefined() || m.Spec.Version != version {
			return fmt.Errorf("Machine %s phase %q nodeRef %q version %s", m.Name, m.Status.Phase, m.Status.NodeRef.Name, m.Spec.Version)
		}
		if m.Status.NodeInfo == nil || m.Status.NodeInfo.KubeletVersion != version {
			return fmt.Errorf("Machine %s nodeInfo %+v", m.Name, m.Status.NodeInfo)
		}
		if !strings.HasPrefix(m.Spec.ProviderID, "openstack:///") {
			return fmt.Errorf("Machine %s providerID %q", m.Name, m.Spec.ProviderID)
		}
		var internal string
		for _, a := range m.Status.Addresses {
			if a.Type == clusterv1.MachineInternalIP {
				internal = a.Address
			}
		}
		if ip, err := netip.ParseAddr(internal); err != nil || !netip.MustParsePrefix("192.168.3.0/24").Contains(ip) {
			return fmt.Errorf("Machine %s addresses %v", m.Name, m.Status.Addresses)
		}
		for k, v := range labels {
			if got, ok := m.Labels[k]; !ok || got != v {
				return fmt.Errorf("Machine %s label %s=%q, want %q", m.Name, k, got, v)
			}
		}
		if m.Labels[clusterv1.ClusterNameLabel] != r.Name {
			return fmt.Errorf("Machine %s has no cluster-name label", m.Name)
		}
		if !controllerutilContains(m.Finalizers, clusterv1.MachineFinalizer) {
			return fmt.Errorf("Machine %s finalizers %v", m.Name, m.Finalizers)
		}
		if err := condTrue(m.Status.Conditions, "Ready", "Available", "UpToDate", "BootstrapConfigReady", "InfrastructureReady", "NodeReady", "NodeHealthy"); err != nil {
			return fmt.Errorf("Machine %s: %w", m.Name, err)
		}
		if m.Status.ObservedGeneration != m.Generation {
			return fmt.Errorf("Machine %s observedGeneration %d/%d", m.Name, m.Status.ObservedGeneration, m.Generation)
		}
	}
	return nil
}

func inFloatingRanges(ip netip.Addr) bool {
	for _, p := range floatingRanges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// capoCondTrue checks a v1beta1-style condition of a CAPO object.
func capoCondTrue(u *unstructured.Unstructured, typ string) bool {
	c := capoCond(u, typ)
	return c != nil && c["status"] == "True"
}

func capoCond(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func ownedByKind(obj metav1.Object, kind, name string) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

func controllerutilContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
