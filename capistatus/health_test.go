package capistatus

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// healthCase is one row of docs/status.md about health. want lists the keys
// that differ from "ok"; every other expected key must be "ok".
type healthCase struct {
	row, name  string
	req        func(*Request)
	snap       func(*Snapshot)
	wantStatus string
	want       map[string]string
	keys       []string // the full key set when it is not the default one
}

var defaultHealthKeys = []string{"api", "infrastructure", "control_plane", "default-worker", "addons"}

func (c healthCase) run(t *testing.T) {
	req := request(CreateComplete)
	if c.req != nil {
		c.req(&req)
	}
	snap := converged()
	if c.snap != nil {
		c.snap(&snap)
	}
	got := DeriveHealth(req, snap)
	keys := c.keys
	if keys == nil {
		keys = defaultHealthKeys
	}
	want := map[string]string{}
	for _, k := range keys {
		want[k] = "ok"
	}
	for k, v := range c.want {
		want[k] = v
	}
	if got.Status != c.wantStatus || !reflect.DeepEqual(got.Reasons, want) {
		t.Errorf("health =\n  %s %v\nwant\n  %s %v", got.Status, got.Reasons, c.wantStatus, want)
	}
}

var healthCases = []healthCase{
	{row: "H-01", name: "no Cluster", snap: func(s *Snapshot) { *s = Snapshot{} }, wantStatus: Unknown,
		want: map[string]string{"api": "Cluster " + stack + " not found", "infrastructure": "OpenStackCluster not found",
			"control_plane": "KubeadmControlPlane " + cpName + " not found", "default-worker": "MachineDeployment " + stack + "-default-worker not found"}},
	{row: "H-02", name: "control plane never initialized", wantStatus: Unknown,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Initialization.ControlPlaneInitialized = nil
			s.Cluster.Status.Conditions = []metav1.Condition{cond2("ControlPlaneInitialized", metav1.ConditionFalse, "NotInitialized", "Control plane not yet initialized"),
				cond2("RemoteConnectionProbe", metav1.ConditionFalse, "ProbeFailed", "Remote connection probe failed")}
			s.ControlPlane.Status.ReadyReplicas = i32(0)
		},
		want: map[string]string{"api": "Remote connection probe failed", "control_plane": "0 of 3 machines ready"}},
	{row: "H-03", name: "healthy", wantStatus: Healthy},
	{row: "H-04", name: "API server unreachable", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[5] = cond2("RemoteConnectionProbe", metav1.ConditionFalse, "ProbeFailed", "Remote connection probe failed, probe last succeeded at 2026-07-01T11:40:00Z")
		},
		want: map[string]string{"api": "Remote connection probe failed, probe last succeeded at 2026-07-01T11:40:00Z"}},
	{row: "H-05", name: "fallback to ControlPlaneAvailable", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions = s.Cluster.Status.Conditions[:5]
			s.Cluster.Status.Conditions[3] = cond2("ControlPlaneAvailable", metav1.ConditionFalse, "NotAvailable", "")
		},
		want: map[string]string{"api": "NotAvailable"}},
	{row: "H-05", name: "fallback to v1beta1 ControlPlaneReady", wantStatus: Healthy,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions = nil
			s.Cluster.Status.Deprecated = &clusterv1.ClusterDeprecatedStatus{V1Beta1: &clusterv1.ClusterV1Beta1DeprecatedStatus{
				Conditions: clusterv1.Conditions{cond1("ControlPlaneReady", "True", "", "", "")}}}
		}},
	{row: "H-05", name: "no API signal at all", wantStatus: Unknown,
		snap: func(s *Snapshot) { s.Cluster.Status.Conditions = nil },
		want: map[string]string{"api": "no probe of the API server reported"}},
	{row: "H-06", name: "OpenStackCluster missing", wantStatus: Unhealthy, snap: func(s *Snapshot) { s.InfraCluster = nil },
		want: map[string]string{"infrastructure": "OpenStackCluster not found"}},
	{row: "H-06", name: "OpenStackCluster failed", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.FailureReason, s.InfraCluster.Status.FailureMessage = str("UpdateError"), str("failed to reconcile router: 409 Conflict")
		},
		want: map[string]string{"infrastructure": "failed to reconcile router: 409 Conflict (UpdateError)"}},
	{row: "H-06", name: "OpenStackCluster error condition", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Conditions = append(s.InfraCluster.Status.Conditions,
				cond1("SecurityGroupsReady", "False", clusterv1.ConditionSeverityError, "SecurityGroupReconcileFailed", "Quota exceeded for resources: ['security_group_rule']"))
		},
		want: map[string]string{"infrastructure": "Quota exceeded for resources: ['security_group_rule']"}},
	{row: "H-06", name: "OpenStackCluster not ready", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Ready = false
			s.InfraCluster.Status.Conditions = nil
		},
		want: map[string]string{"infrastructure": "OpenStackCluster " + stack + " not ready"}},
	{row: "H-07", name: "KubeadmControlPlane missing", wantStatus: Unhealthy, snap: func(s *Snapshot) { s.ControlPlane = nil },
		want: map[string]string{"control_plane": "KubeadmControlPlane " + cpName + " not found"}},
	{row: "H-07", name: "control plane not Available", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "* EtcdClusterHealthy: 1 of 3 etcd members unhealthy")
		},
		want: map[string]string{"control_plane": "EtcdClusterHealthy: 1 of 3 etcd members unhealthy"}},
	{row: "H-07", name: "etcd unhealthy", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Conditions[1] = cond2("EtcdClusterHealthy", metav1.ConditionFalse, "NotHealthy", "etcd member a1b2c: alarm NOSPACE")
		},
		want: map[string]string{"control_plane": "EtcdClusterHealthy: etcd member a1b2c: alarm NOSPACE"}},
	{row: "H-07", name: "control plane machine down", wantStatus: Unhealthy,
		snap: func(s *Snapshot) { s.ControlPlane.Status.ReadyReplicas = i32(2) },
		want: map[string]string{"control_plane": "2 of 3 machines ready"}},
	{row: "H-08", name: "MachineDeployment missing", wantStatus: Unhealthy, snap: func(s *Snapshot) { s.MachineDeployments = nil },
		want: map[string]string{"default-worker": "MachineDeployment " + stack + "-default-worker not found"}},
	{row: "H-08", name: "MachineDeployment not Available", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "1 available replicas, at least 2 required")
		},
		want: map[string]string{"default-worker": "1 available replicas, at least 2 required"}},
	{row: "H-08", name: "worker down", wantStatus: Unhealthy,
		snap: func(s *Snapshot) { s.MachineDeployments[0].Status.ReadyReplicas = i32(1) },
		want: map[string]string{"default-worker": "1 of 2 machines ready"}},
	{row: "H-09", name: "node group named like a key, deleting group, orphan MachineDeployment", wantStatus: Healthy,
		req: func(r *Request) {
			r.NodeGroups = append(r.NodeGroups,
				NodeGroup{Name: "api", Role: "worker", Status: CreateComplete, ChartName: "api", NodeCount: 1},
				NodeGroup{Name: "old", Role: "worker", Status: DeleteInProgress, ChartName: "old", NodeCount: 1})
		},
		snap: func(s *Snapshot) {
			s.MachineDeployments = append(s.MachineDeployments, deployment("api", 1), deployment("old", 1), deployment("orphan", 1))
		},
		keys: []string{"api", "infrastructure", "control_plane", "default-worker", "nodegroup:api", "orphan", "addons"}},
	{row: "H-10", name: "addons failed or never deployed", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.Addons[0].Phase, s.Addons[0].FailureMessage = AddonFailed, "timed out waiting for the condition"
			s.Addons[1].Phase = AddonInstalling
			s.Addons = append(s.Addons, addon("HelmRelease", "metrics-server", AddonUpgrading), addon("HelmRelease", "kube-prometheus-stack", AddonUninstalling))
		},
		want: map[string]string{"addons": "cni-calico failed: timed out waiting for the condition, csi-cinder Installing"}},
	{row: "H-10", name: "addons upgrading are healthy", wantStatus: Healthy,
		snap: func(s *Snapshot) { s.Addons[0].Phase = AddonUpgrading }},
	{row: "H-11", name: "probe unknown", wantStatus: Unknown,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[5] = cond2("RemoteConnectionProbe", metav1.ConditionUnknown, "ProbeUnknown", "Remote connection probe not yet run")
		},
		want: map[string]string{"api": "Remote connection probe not yet run"}},
	{row: "H-11", name: "unhealthy beats unknown", wantStatus: Unhealthy,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[5] = cond2("RemoteConnectionProbe", metav1.ConditionUnknown, "ProbeUnknown", "")
			s.MachineDeployments[0].Status.ReadyReplicas = i32(0)
		},
		want: map[string]string{"api": "ProbeUnknown", "default-worker": "0 of 2 machines ready"}},
	{row: "H-12", name: "Cluster being deleted", wantStatus: Unknown,
		snap: func(s *Snapshot) {
			*s = deletingSnapshot()
			s.MachineDeployments[0].Status.ReadyReplicas = i32(0)
		},
		want: map[string]string{"api": "Cluster " + stack + " is being deleted", "default-worker": "0 of 2 machines ready"}},
}

func TestDeriveHealth(t *testing.T) {
	for _, c := range healthCases {
		t.Run(c.row+" "+c.name, c.run)
	}
}
