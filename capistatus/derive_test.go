package capistatus

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// deriveCase is one row of docs/status.md about the cluster's status.
type deriveCase struct {
	row, name string
	status    string          // Magnum's cluster (and node group) status
	req       func(*Request)  // changes to the request
	snap      func(*Snapshot) // changes to the converged snapshot
	cfg       Config          // zero: defaults
	want      string          // expected cluster status
	reason    string          // expected status_reason, exactly (when wantExact)
	wantExact bool            // compare reason exactly
	has       []string        // substrings the reason must contain, in this order
	hasNot    []string        // substrings it must not contain
	check     func(*testing.T, Result)
}

func (c deriveCase) run(t *testing.T) {
	t.Helper()
	req := request(c.status)
	if c.req != nil {
		c.req(&req)
	}
	snap := converged()
	if c.snap != nil {
		c.snap(&snap)
	}
	got := Derive(req, snap, c.cfg)
	if got.Status != c.want {
		t.Errorf("status = %q, want %q (reason %q)", got.Status, c.want, got.StatusReason)
	}
	if c.wantExact && got.StatusReason != c.reason {
		t.Errorf("reason =\n  %q\nwant\n  %q", got.StatusReason, c.reason)
	}
	assertInOrder(t, got.StatusReason, c.has)
	for _, s := range c.hasNot {
		if strings.Contains(got.StatusReason, s) {
			t.Errorf("reason %q contains %q", got.StatusReason, s)
		}
	}
	if c.check != nil {
		c.check(t, got)
	}
}

// assertInOrder checks that every want appears in s, each after the previous.
func assertInOrder(t *testing.T, s string, wants []string) {
	t.Helper()
	rest := s
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("reason %q: missing %q (or out of order)", s, w)
			return
		}
		rest = rest[i+len(w):]
	}
}

func runDeriveCases(t *testing.T, cases []deriveCase) {
	for _, c := range cases {
		t.Run(c.row+" "+c.name, c.run)
	}
}

const cpName = stack + "-control-plane"

// notReadyMachine marks machine i not ready with a CAPI-style bullet message.
func notReadyMachine(i int, msg string) func(*Snapshot) {
	return func(s *Snapshot) {
		s.Machines[i].Status.Conditions[0] = cond2("Ready", metav1.ConditionFalse, "NotReady", msg)
	}
}

// serverFailing makes machine i wait for its OpenStackServer, which Nova
// refused (InstanceReady false, severity Error, with reason and message).
func serverFailing(i int, reason, message string) func(*Snapshot) {
	return func(s *Snapshot) {
		m := &s.Machines[i]
		m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackMachine", Name: m.Name}
		m.Status.Conditions[0] = cond2("Ready", metav1.ConditionFalse, "NotReady", "* InfrastructureReady: WaitingForBootstrapData")
		s.MachineDeployments[0].Status.ReadyReplicas, s.MachineDeployments[0].Status.AvailableReplicas = i32(1), i32(1)
		s.Servers = append(s.Servers, OpenStackServer{ObjectMeta: meta(m.Name, 1, map[string]string{labelCAPICluster: stack}),
			Status: OpenStackServerStatus{Conditions: clusterv1.Conditions{cond1("InstanceReady", "False", clusterv1.ConditionSeverityError, reason, message)}}})
	}
}

func chain(fs ...func(*Snapshot)) func(*Snapshot) {
	return func(s *Snapshot) {
		for _, f := range fs {
			f(s)
		}
	}
}

var provisioningCases = []deriveCase{
	{row: "C-01", name: "converged create", status: CreateInProgress, want: CreateComplete, wantExact: true, reason: ""},
	{row: "C-02", name: "converged update", status: UpdateInProgress, want: UpdateComplete, wantExact: true, reason: ""},
	{row: "C-03", name: "converged rollback", status: RollbackInProgress, want: RollbackComplete, wantExact: true, reason: "",
		check: func(t *testing.T, r Result) {
			if r.NodeGroups[0].Status != RollbackComplete {
				t.Errorf("node group status = %q, want ROLLBACK_COMPLETE", r.NodeGroups[0].Status)
			}
		}},
	{row: "C-04", name: "no Cluster yet", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { *s = Snapshot{} },
		has:  []string{"waiting for: Cluster " + stack + " not found", "OpenStackCluster not found", "control plane: KubeadmControlPlane " + cpName + " not found"}},
	{row: "C-05", name: "release not installed", status: CreateInProgress, want: CreateInProgress,
		req: func(r *Request) { r.ReleaseExists = false }, wantExact: true,
		reason: "waiting for: Helm release " + stack + " to be installed"},
	{row: "C-34", name: "converged objects while Helm still writes the release", status: UpdateInProgress, want: UpdateInProgress,
		req: func(r *Request) { r.ReleaseWriting = true }, wantExact: true,
		reason: "waiting for: Helm release " + stack + " still being written (its call ran out of time first)"},
	{row: "C-06", name: "Cluster status older than its spec", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.Cluster.Generation = 3 }, wantExact: true,
		reason: "waiting for: Cluster controller has not yet reconciled the latest spec (generation 3, observed 2)"},
	{row: "C-07", name: "Cluster not Available though parts are", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "* RemoteConnectionProbe: Remote connection not established yet")
		}, wantExact: true,
		reason: "waiting for: Cluster " + stack + " not Available: RemoteConnectionProbe: Remote connection not established yet"},
	{row: "C-08", name: "v1beta1 conditions only, Ready true", status: CreateInProgress, want: CreateComplete,
		snap: v1beta1Only(true)},
	{row: "C-08", name: "v1beta1 conditions only, Ready false", status: CreateInProgress, want: CreateInProgress,
		snap: v1beta1Only(false), has: []string{"Cluster " + stack + " not Available: Waiting for control plane"}},
	{row: "C-09", name: "Cluster being deleted", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { now := metav1.NewTime(t0); s.Cluster.DeletionTimestamp = &now },
		has:  []string{"Cluster " + stack + " is being deleted"}},
	{row: "C-09", name: "Cluster paused", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { s.Cluster.Spec.Paused = boolp(true) }, wantExact: true,
		reason: "waiting for: Cluster " + stack + " is paused (spec.paused)"},
	{row: "C-10", name: "no OpenStackCluster", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { s.InfraCluster = nil }, wantExact: true,
		reason: "waiting for: OpenStackCluster " + stack + " not found"},
	{row: "C-11", name: "OpenStackCluster not ready", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Ready = false
			s.InfraCluster.Status.Conditions = clusterv1.Conditions{cond1("Ready", "False", clusterv1.ConditionSeverityInfo, "LoadBalancerNotReady", "Waiting for load balancer to become ACTIVE")}
		},
		has: []string{"OpenStackCluster " + stack + " not ready: Waiting for load balancer to become ACTIVE"}},
	{row: "C-11", name: "OpenStackCluster provisioned via initialization", status: CreateInProgress, want: CreateComplete,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Ready = false
			s.InfraCluster.Status.Initialization = &OpenStackClusterInitialization{Provisioned: boolp(true)}
		}},
	{row: "C-12", name: "Cluster has not mirrored infrastructure readiness", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[1] = cond2("InfrastructureReady", metav1.ConditionFalse, "NotReady", "OpenStackCluster status.initialization.provisioned is false")
		}, wantExact: true,
		reason: "waiting for: Cluster " + stack + " InfrastructureReady: OpenStackCluster status.initialization.provisioned is false"},
	{row: "C-13", name: "CAPO retrying a refused OpenStack call", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Ready = false
			s.InfraCluster.Status.Conditions = clusterv1.Conditions{
				cond1("Ready", "False", clusterv1.ConditionSeverityError, "LoadBalancerReconcileFailed", "failed to create load balancer: Quota exceeded for resources: ['loadbalancer']"),
			}
			s.ControlPlane = nil
		},
		has: []string{"waiting for: OpenStackCluster " + stack + ": failed to create load balancer: Quota exceeded", "not ready", "control plane: KubeadmControlPlane"}},
	{row: "C-14", name: "no KubeadmControlPlane", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { s.ControlPlane = nil }, wantExact: true,
		reason: "waiting for: control plane: KubeadmControlPlane " + cpName + " not found"},
	{row: "C-15", name: "stale control plane status", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.ControlPlane.Generation = 4 }, wantExact: true,
		reason: "waiting for: control plane: KubeadmControlPlane controller has not yet reconciled the latest spec (generation 4, observed 3)"},
	// Recorded from CAPI v1.13 (capistatus/testdata/capi-v1.13/upgrade-unreachable):
	// KCP keeps failing (it cannot reach the workload cluster), so
	// observedGeneration stays behind, but it still writes its conditions,
	// and the Machine controller the machines'.
	{row: "C-15", name: "control plane reconcile failing", status: UpdateInProgress, want: UpdateInProgress,
		snap: chain(func(s *Snapshot) {
			s.ControlPlane.Generation = 4
			s.ControlPlane.Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "Waiting for etcd to report the list of members")
		}, notReadyMachine(0, "* NodeHealthy: Node is unreachable")), wantExact: true,
		reason: "waiting for: control plane: KubeadmControlPlane controller has not yet reconciled the latest spec (generation 4, observed 3), not Available: Waiting for etcd to report the list of members, machine " + stack + "-control-plane-a1b2c: NodeHealthy: Node is unreachable"},
	{row: "C-16", name: "control plane machines coming up", status: CreateInProgress, want: CreateInProgress,
		snap: chain(func(s *Snapshot) {
			s.ControlPlane.Status.ReadyReplicas, s.ControlPlane.Status.AvailableReplicas = i32(1), i32(1)
		}, notReadyMachine(1, "* NodeHealthy: Waiting for a Node with spec.providerID openstack:///4e1f to exist")),
		wantExact: true,
		// The provider ID (a Nova server's UUID) means nothing to a tenant.
		reason: "waiting for: control plane: 1 of 3 machines ready, machine " + stack + "-control-plane-d3e4f: NodeHealthy: Waiting for the server's Kubernetes node to exist"},
	{row: "C-17", name: "control plane upgrading", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.ControlPlane.Status.Version = "v1.32.5" }, wantExact: true,
		reason: "waiting for: control plane: upgrading from v1.32.5 to v1.33.2"},
	{row: "C-18", name: "control plane surge", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Replicas, s.ControlPlane.Status.UpToDateReplicas = i32(4), i32(1)
			s.Machines = append(s.Machines, cpMachine("z9y8x", "10.0.0.14"))
			for i := 0; i < 3; i++ {
				s.Machines[i].Status.Conditions[1] = cond2("UpToDate", metav1.ConditionFalse, "NotUpToDate", "* Version v1.32.5, v1.33.2 required")
			}
		}, wantExact: true,
		reason: "waiting for: control plane: 4 machines, want 3, 1 of 3 machines up to date, 3 machines of an older spec"},
	{row: "C-19", name: "control plane machine of an older spec", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.Machines[0].Status.Conditions[1] = cond2("UpToDate", metav1.ConditionFalse, "NotUpToDate", "")
		}, wantExact: true,
		reason: "waiting for: control plane: 1 machine of an older spec"},
	{row: "C-19", name: "control plane machine being deleted", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			now := metav1.NewTime(t0)
			s.Machines = append(s.Machines, cpMachine("old00", "10.0.0.9"))
			s.Machines[len(s.Machines)-1].DeletionTimestamp = &now
		}, wantExact: true,
		reason: "waiting for: control plane: 1 machine being deleted"},
	{row: "C-31", name: "machine spec change not yet reconciled", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.Machines[3].Generation = 2 }, wantExact: true,
		reason: "waiting for: node group default-worker: 1 machine not yet reconciled since its spec changed"},
	// Recorded from CAPI v1.13 (testdata/capi-v1.13/upgrade-unreachable).
	{row: "C-32", name: "workload cluster unreachable", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[5] = cond2("RemoteConnectionProbe", metav1.ConditionFalse, "ProbeFailed", "Remote connection probe failed, probe last succeeded at 2026-12-03T13:24:30Z")
			s.ControlPlane.Generation = 4
		},
		has: []string{"waiting for: Cluster " + stack + " cannot reach the cluster's API server: Remote connection probe failed, probe last succeeded at 2026-12-03T13:24:30Z; control plane: KubeadmControlPlane controller has not yet reconciled"}},
	{row: "C-32", name: "not reachable before the control plane is initialized: not a problem yet", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Conditions[2] = cond2("ControlPlaneInitialized", metav1.ConditionFalse, "NotInitialized", "Control plane not yet initialized")
			s.Cluster.Status.Conditions[5] = cond2("RemoteConnectionProbe", metav1.ConditionFalse, "ProbeFailed", "Remote connection not established yet")
			s.ControlPlane.Generation = 4
		}, wantExact: true,
		reason: "waiting for: control plane: KubeadmControlPlane controller has not yet reconciled the latest spec (generation 4, observed 3)"},
	{row: "C-20", name: "control plane not Available", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "* EtcdClusterHealthy: etcd member unhealthy")
		}, wantExact: true,
		reason: "waiting for: control plane: not Available: EtcdClusterHealthy: etcd member unhealthy"},
	{row: "C-20", name: "control plane RollingOut", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Conditions[3] = cond2("RollingOut", metav1.ConditionTrue, "RollingOut", "Rolling out 1 not up-to-date replicas")
		}, wantExact: true,
		reason: "waiting for: control plane: RollingOut: Rolling out 1 not up-to-date replicas"},
	{row: "C-21", name: "new node group without MachineDeployment", status: UpdateInProgress, want: UpdateInProgress,
		req: func(r *Request) {
			r.NodeGroups = append(r.NodeGroups, NodeGroup{UUID: "uuid-gpu", Name: "gpu", Role: "worker", Status: CreateInProgress, ChartName: "gpu", NodeCount: 1})
		}, wantExact: true,
		reason: "waiting for: node group gpu: MachineDeployment " + stack + "-gpu not found"},
	{row: "C-22", name: "stale MachineDeployment status", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.MachineDeployments[0].Generation = 3 }, wantExact: true,
		reason: "waiting for: node group default-worker: MachineDeployment controller has not yet reconciled the latest spec (generation 3, observed 2)"},
	{row: "C-22", name: "MachineDeployment lagging, a machine being deleted", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Generation = 3
			now := metav1.Now()
			s.Machines[3].DeletionTimestamp = &now
		}, wantExact: true,
		reason: "waiting for: node group default-worker: MachineDeployment controller has not yet reconciled the latest spec (generation 3, observed 2), 1 machine being deleted"},
	{row: "C-23", name: "worker not available", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.MachineDeployments[0].Status.AvailableReplicas = i32(1) }, wantExact: true,
		reason: "waiting for: node group default-worker: 1 of 2 machines available"},
	{row: "C-24", name: "worker machine of an older spec", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			s.Machines[4].Status.Conditions[1] = cond2("UpToDate", metav1.ConditionFalse, "NotUpToDate", "")
		}, wantExact: true,
		reason: "waiting for: node group default-worker: 1 machine of an older spec"},
	{row: "C-25", name: "MachineDeployment without node group", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) {
			md := deployment("extra", 1)
			md.Status.ReadyReplicas = i32(0)
			s.MachineDeployments = append(s.MachineDeployments, md)
			s.Machines = append(s.Machines, workerMachine("extra", "a0a0a", "10.0.0.31"))
		},
		has: []string{"MachineDeployment " + stack + "-extra: 0 of 1 machines ready"}},
	{row: "C-26", name: "node group deletion within an update", status: UpdateInProgress, want: UpdateInProgress,
		req: func(r *Request) {
			r.NodeGroups = append(r.NodeGroups, NodeGroup{UUID: "uuid-old", Name: "old", Role: "worker", Status: DeleteInProgress, ChartName: "old", NodeCount: 2})
		},
		snap: func(s *Snapshot) {
			s.MachineDeployments = append(s.MachineDeployments, deployment("old", 2))
			s.Machines = append(s.Machines, workerMachine("old", "aaaaa", "10.0.0.41"), workerMachine("old", "bbbbb", "10.0.0.42"))
		}, wantExact: true,
		reason: "waiting for: node group old deletion: MachineDeployment " + stack + "-old, 2 machines (" + stack + "-old-aaaaa, " + stack + "-old-bbbbb)"},
	{row: "C-27", name: "failed machine leads the reason", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Status.ReadyReplicas, s.MachineDeployments[0].Status.AvailableReplicas = i32(1), i32(1)
			s.Machines[3].Status.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{
				FailureReason: machineErr("UpdateError"), FailureMessage: str("OpenStack instance state \"ERROR\" is unexpected: No valid host was found.")}}
		},
		has: []string{"waiting for: machine " + stack + "-default-worker-x1y2z failed: OpenStack instance state \"ERROR\" is unexpected: No valid host was found. (UpdateError)", "node group default-worker: 1 of 2 machines ready"}},
	{row: "C-27", name: "machine with an error condition", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Machines[4].Status.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{
				Conditions: clusterv1.Conditions{cond1("InfrastructureReady", "False", clusterv1.ConditionSeverityError, "InstanceCreateFailed", "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances")}}}
			s.MachineDeployments[0].Status.ReadyReplicas = i32(1)
		},
		has: []string{"waiting for: machine " + stack + "-default-worker-u3v4w: Quota exceeded for instances"}},
	// Recorded from CAPI v1.13 with CAPO v0.14's OpenStackServer
	// (testdata/capi-v1.13/nova-quota, nova-error): the machine only shows
	// CAPO's stale WaitingForBootstrapData.
	{row: "C-33", name: "Nova refused the server", status: CreateInProgress, want: CreateInProgress,
		snap: serverFailing(4, "InstanceCreateFailed", `Expected HTTP response code [202] when accessing [POST https://nova.example.test:8774/v2.1/servers], but got 403 instead: {"forbidden": {"code": 403, "message": "Quota exceeded for instances: Requested 1, but already used 10 of 10 instances"}}`),
		has: []string{"waiting for: machine " + stack + "-default-worker-u3v4w: its OpenStack server: the compute service refused to create a server (HTTP 403 Forbidden: Quota exceeded for instances",
			"The project's instances quota is used up",
			"node group default-worker: 1 of 2 machines ready, machine " + stack + "-default-worker-u3v4w: its OpenStack server did not come up"}},
	{row: "C-33", name: "server in ERROR", status: CreateInProgress, want: CreateInProgress,
		snap: serverFailing(4, "InstanceStateError", ""),
		has:  []string{"waiting for: machine " + stack + "-default-worker-u3v4w: its OpenStack server is in ERROR state"}},
	{row: "C-33", name: "a server not named after its machine is named", status: CreateInProgress, want: CreateInProgress,
		snap: chain(serverFailing(4, "InstanceStateError", ""), func(s *Snapshot) {
			s.Servers[0].Name = "other"
			s.Machines[4].Spec.InfrastructureRef.Name = "other"
		}),
		has: []string{"waiting for: machine " + stack + "-default-worker-u3v4w: OpenStack server other is in ERROR state"}},
	{row: "C-33", name: "a server still building is no problem; its state beats CAPO's stale condition", status: CreateInProgress, want: CreateInProgress,
		snap: chain(serverFailing(4, "", ""), func(s *Snapshot) {
			s.Servers[0].Status.Conditions = nil
			s.Servers[0].Status.InstanceState = str("BUILD")
		}), wantExact: true,
		reason: "waiting for: node group default-worker: 1 of 2 machines ready, machine " + stack + "-default-worker-u3v4w: its OpenStack server is building"},
	{row: "C-33", name: "no server yet", status: CreateInProgress, want: CreateInProgress,
		snap: chain(serverFailing(4, "", ""), func(s *Snapshot) { s.Servers[0].Status.Conditions = nil }), wantExact: true,
		reason: "waiting for: node group default-worker: 1 of 2 machines ready, machine " + stack + "-default-worker-u3v4w: its OpenStack server is being created"},
	{row: "C-28", name: "addons in transient phases", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Addons[0].Phase = AddonInstalling
			s.Addons[1].Phase = ""
			s.Addons[2].Phase = AddonPending
			s.Addons = append(s.Addons, addon("HelmRelease", "metrics-server", AddonUpgrading), addon("HelmRelease", "node-feature-discovery", AddonPreparing))
		}, wantExact: true,
		reason: "waiting for: addons cni-calico (Installing), csi-cinder (Unknown), metrics-server (Upgrading), node-feature-discovery (Preparing), cloud-config (Pending)"},
	{row: "C-29", name: "addon being removed", status: UpdateInProgress, want: UpdateInProgress,
		snap: func(s *Snapshot) { s.Addons[1].Deleting, s.Addons[1].Phase = true, AddonUninstalling }, wantExact: true,
		reason: "waiting for: addons csi-cinder (being removed)"},
	{row: "C-30", name: "bounded and ordered", status: CreateInProgress, want: CreateInProgress,
		req: func(r *Request) {
			r.NodeGroups = append(r.NodeGroups, NodeGroup{Name: "gpu", Role: "worker", Status: CreateInProgress, ChartName: "gpu", NodeCount: 1})
		},
		snap: func(s *Snapshot) {
			s.Addons[0].Phase = AddonPending
			s.MachineDeployments[0].Status.ReadyReplicas = i32(0)
			s.ControlPlane.Status.Replicas, s.ControlPlane.Status.UpToDateReplicas, s.ControlPlane.Status.ReadyReplicas = i32(4), i32(1), i32(2)
			s.ControlPlane.Status.Version = "v1.32.5"
			s.Machines[0].Status.Conditions[0] = cond2("Ready", metav1.ConditionFalse, "NotReady", strings.Repeat("kubelet is slow. ", 30))
			s.InfraCluster.Status.Conditions = append(s.InfraCluster.Status.Conditions,
				cond1("APIServerLoadBalancerReady", "False", clusterv1.ConditionSeverityError, "Failed", strings.Repeat("octavia said no. ", 100)+"THE END"))
			s.Cluster.Status.Conditions[0] = cond2("Available", metav1.ConditionFalse, "NotAvailable", "summary repeating the above")
		},
		has: []string{
			"waiting for: OpenStackCluster " + stack + ": octavia said no.", "...; control plane: ", // a provider error: cut at 1000 runes
			"4 machines, want 3, 1 of 3 machines up to date, 2 of 3 machines ready, upgrading from v1.32.5 to v1.33.2", "kubelet is...; ", // other items at 300
			"node group default-worker: 0 of 2 machines ready; node group gpu: MachineDeployment " + stack + "-gpu not found; +1 more",
		},
		hasNot: []string{"THE END", "summary repeating", "cni-calico"},
		check: func(t *testing.T, r Result) {
			for i, part := range strings.Split(strings.TrimPrefix(r.StatusReason, "waiting for: "), "; ") {
				if limit := map[bool]int{true: maxProblemLen, false: maxItemLen}[i == 0]; len([]rune(part)) > limit {
					t.Errorf("item %d is %d runes, want at most %d", i, len([]rune(part)), limit)
				}
			}
		}},
}

func TestDeriveProvisioning(t *testing.T) { runDeriveCases(t, provisioningCases) }

// v1beta1Only rewrites the converged snapshot the way a pre-1.11 CAPI
// controller leaves it behind the v1beta2 API: no v1beta2 conditions or
// counts, only the deprecated v1beta1 ones.
func v1beta1Only(ready bool) func(*Snapshot) {
	return func(s *Snapshot) {
		status, msg := "True", ""
		if !ready {
			status, msg = "False", "Waiting for control plane provider to indicate the control plane has been initialized"
		}
		s.Cluster.Status.Conditions = nil
		s.Cluster.Status.Deprecated = &clusterv1.ClusterDeprecatedStatus{V1Beta1: &clusterv1.ClusterV1Beta1DeprecatedStatus{Conditions: clusterv1.Conditions{
			cond1("Ready", status, clusterv1.ConditionSeverityInfo, "WaitingForControlPlane", msg),
			cond1("InfrastructureReady", "True", "", "", ""),
		}}}
		k := s.ControlPlane
		k.Status.Conditions, k.Status.UpToDateReplicas, k.Status.ReadyReplicas, k.Status.AvailableReplicas = nil, nil, nil, nil
		k.Status.Deprecated = &controlplaneDeprecated{V1Beta1: &controlplaneV1Beta1{
			Conditions: clusterv1.Conditions{cond1("Ready", "True", "", "", "")}, UpdatedReplicas: 3, ReadyReplicas: 3}}
		k.Status.AvailableReplicas = i32(3)
		md := &s.MachineDeployments[0]
		md.Status.Conditions, md.Status.UpToDateReplicas, md.Status.ReadyReplicas, md.Status.AvailableReplicas = nil, nil, nil, nil
		md.Status.Deprecated = &clusterv1.MachineDeploymentDeprecatedStatus{V1Beta1: &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{
			Conditions: clusterv1.Conditions{cond1("Available", "True", "", "", "")}, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}}
		for i := range s.Machines {
			s.Machines[i].Status.Conditions = nil
			s.Machines[i].Status.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{
				Conditions: clusterv1.Conditions{cond1("Ready", "True", "", "", "")}}}
		}
	}
}

var failureCases = []deriveCase{
	{row: "F-01", name: "Octavia quota on create", status: CreateInProgress, want: CreateFailed,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.Ready = false
			s.InfraCluster.Status.FailureReason = str("CreateError")
			s.InfraCluster.Status.FailureMessage = str("failed to reconcile load balancer: Expected HTTP response code [201 202] when accessing [POST https://octavia:9876/v2.0/lbaas/loadbalancers], but got 403 instead: {\"faultstring\": \"Quota has been met for resources: LoadBalancer\"}")
		}, wantExact: true,
		reason: "OpenStackCluster " + stack + " failed: failed to reconcile load balancer: the load balancer service refused to create a load balancer " +
			"(HTTP 403 Forbidden: Quota has been met for resources: LoadBalancer). The project's loadbalancer quota is used up: delete what you no longer use, " +
			"or ask your cloud operator to raise the quota (CreateError)",
		check: func(t *testing.T, r Result) {
			for _, ng := range r.NodeGroups {
				if ng.Status != CreateComplete && ng.Status != CreateFailed {
					t.Errorf("node group %s status %q: a failed cluster leaves no node group in progress", ng.Name, ng.Status)
				}
			}
		}},
	{row: "F-02", name: "CAPO failure during update", status: UpdateInProgress, want: UpdateFailed,
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.FailureReason = str("UpdateError")
			s.InfraCluster.Status.FailureMessage = str("failed to reconcile network: Quota exceeded for resources: ['subnet']")
		}, wantExact: true,
		reason: "OpenStackCluster " + stack + " failed: failed to reconcile network: Quota exceeded for resources: ['subnet'] (UpdateError)"},
	{row: "F-03", name: "Cluster failure fields", status: CreateInProgress, want: CreateFailed,
		snap: func(s *Snapshot) {
			s.Cluster.Status.Deprecated = &clusterv1.ClusterDeprecatedStatus{V1Beta1: &clusterv1.ClusterV1Beta1DeprecatedStatus{
				FailureReason: clusterErr("InvalidConfiguration"), FailureMessage: str("infrastructure reference is invalid")}}
		}, wantExact: true,
		reason: "Cluster " + stack + " failed: infrastructure reference is invalid (InvalidConfiguration)"},
	{row: "F-03", name: "KubeadmControlPlane failure fields", status: CreateInProgress, want: CreateFailed,
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Deprecated = &controlplaneDeprecated{V1Beta1: &controlplaneV1Beta1{
				FailureReason: "InvalidConfiguration", FailureMessage: str("cannot scale down to an even number of etcd members")}}
		}, wantExact: true,
		reason: "KubeadmControlPlane " + cpName + " failed: cannot scale down to an even number of etcd members (InvalidConfiguration)"},
	{row: "F-04", name: "addon failed within grace", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) {
			s.Addons[0].Phase, s.Addons[0].FailureMessage, s.Addons[0].FailedSince = AddonFailed, "context deadline exceeded", t0.Add(-9*time.Minute)
		}, wantExact: true,
		reason: "waiting for: addon cni-calico failed, retrying for up to 10 minutes: context deadline exceeded"},
	{row: "F-05", name: "addon failed past grace", status: CreateInProgress, want: CreateFailed,
		snap: func(s *Snapshot) {
			s.Addons[1].Phase, s.Addons[1].FailureMessage, s.Addons[1].FailedSince = AddonFailed, "chart openstack-cinder-csi 9.9.9 not found", t0.Add(-10*time.Minute)
		}, wantExact: true,
		reason: "addon csi-cinder failed: chart openstack-cinder-csi 9.9.9 not found"},
	{row: "F-05", name: "configured grace", status: CreateInProgress, want: CreateFailed, cfg: Config{AddonFailureGrace: time.Minute},
		snap: func(s *Snapshot) {
			s.Addons[1].Phase, s.Addons[1].FailedSince = AddonFailed, t0.Add(-2*time.Minute)
		}, wantExact: true,
		reason: "addon csi-cinder failed: no failure message"},
	{row: "F-06", name: "addon failed, time unknown", status: CreateInProgress, want: CreateInProgress,
		snap: func(s *Snapshot) { s.Addons[0].Phase, s.Addons[0].FailureMessage = AddonFailed, "boom" },
		has:  []string{"waiting for: addon cni-calico failed, retrying for up to 10 minutes: boom"}},
}

func TestDeriveFailures(t *testing.T) { runDeriveCases(t, failureCases) }

var timeoutCases = []deriveCase{
	{row: "T-01", name: "create_timeout reached", status: CreateInProgress, want: CreateFailed,
		req:  func(r *Request) { r.CreateTimeout = 45 * time.Minute; r.OperationStarted = t0.Add(-45 * time.Minute) },
		snap: func(s *Snapshot) { s.ControlPlane.Status.ReadyReplicas = i32(2) }, wantExact: true,
		reason: "timed out after 45 minutes waiting for: control plane: 2 of 3 machines ready",
		check: func(t *testing.T, r Result) {
			if r.NodeGroups[0].Status != CreateFailed || r.NodeGroups[0].StatusReason != "timed out after 45 minutes waiting for: 2 of 3 machines ready" {
				t.Errorf("control plane node group = %q %q", r.NodeGroups[0].Status, r.NodeGroups[0].StatusReason)
			}
		}},
	{row: "T-01", name: "just before create_timeout", status: CreateInProgress, want: CreateInProgress,
		req: func(r *Request) {
			r.CreateTimeout = 45 * time.Minute
			r.OperationStarted = t0.Add(-45*time.Minute + time.Second)
		},
		snap: func(s *Snapshot) { s.ControlPlane.Status.ReadyReplicas = i32(2) }},
	{row: "T-02", name: "default create timeout reached", status: CreateInProgress, want: CreateFailed,
		req:  func(r *Request) { r.OperationStarted = t0.Add(-60 * time.Minute) },
		snap: func(s *Snapshot) { s.InfraCluster = nil },
		has:  []string{"timed out after 60 minutes waiting for: OpenStackCluster"}},
	{row: "T-02", name: "default create timeout not reached", status: CreateInProgress, want: CreateInProgress,
		req:  func(r *Request) { r.OperationStarted = t0.Add(-59 * time.Minute) },
		snap: func(s *Snapshot) { s.InfraCluster = nil }},
	{row: "T-03", name: "update timeout", status: UpdateInProgress, want: UpdateFailed,
		req:  func(r *Request) { r.OperationStarted = t0.Add(-2 * time.Hour) },
		snap: func(s *Snapshot) { s.ControlPlane.Status.Version = "v1.32.5" }, wantExact: true,
		reason: "timed out after 120 minutes waiting for: control plane: upgrading from v1.32.5 to v1.33.2"},
	{row: "T-03", name: "configured update timeout", status: UpdateInProgress, want: UpdateFailed, cfg: Config{UpdateTimeout: 90 * time.Second},
		snap: func(s *Snapshot) { s.ControlPlane.Status.Version = "v1.32.5" },
		has:  []string{"timed out after 1m30s waiting for"}},
	{row: "T-04", name: "delete timeout", status: DeleteInProgress, want: DeleteFailed,
		req: func(r *Request) { r.OperationStarted = t0.Add(-31 * time.Minute) },
		snap: func(s *Snapshot) {
			*s = Snapshot{InfraCluster: deleting(infraCluster(), "openstackcluster.infrastructure.cluster.x-k8s.io")}
		},
		wantExact: true,
		reason:    "timed out after 30 minutes waiting for deletion of: OpenStackCluster " + stack + " (finalizers: openstackcluster.infrastructure.cluster.x-k8s.io)"},
	{row: "T-05", name: "no start time", status: CreateInProgress, want: CreateInProgress,
		req:  func(r *Request) { r.OperationStarted = time.Time{} },
		snap: func(s *Snapshot) { s.InfraCluster = nil }},
	{row: "T-05", name: "no clock", status: CreateInProgress, want: CreateInProgress,
		req:  func(r *Request) { r.Now = time.Time{}; r.OperationStarted = t0.Add(-10 * time.Hour) },
		snap: func(s *Snapshot) { s.InfraCluster = nil }},
	{row: "T-06", name: "complete after the deadline", status: CreateInProgress, want: CreateComplete,
		req: func(r *Request) { r.OperationStarted = t0.Add(-10 * time.Hour) }},
	{row: "T-07", name: "transient addon past the deadline", status: CreateInProgress, want: CreateFailed,
		req:  func(r *Request) { r.OperationStarted = t0.Add(-61 * time.Minute) },
		snap: func(s *Snapshot) { s.Addons[0].Phase = AddonInstalling }, wantExact: true,
		reason: "timed out after 60 minutes waiting for: addons cni-calico (Installing)"},
}

func TestDeriveTimeouts(t *testing.T) { runDeriveCases(t, timeoutCases) }

// deleting marks an object deleted with the given finalizers.
func deleting[T interface {
	SetDeletionTimestamp(*metav1.Time)
	SetFinalizers([]string)
}](o T, finalizers ...string) T {
	now := metav1.NewTime(t0.Add(-5 * time.Minute))
	o.SetDeletionTimestamp(&now)
	o.SetFinalizers(finalizers)
	return o
}

// deletingSnapshot is a cluster halfway through deletion: the Cluster and
// everything else marked deleted, machines draining.
func deletingSnapshot() Snapshot {
	s := converged()
	s.Addons = nil
	s.Cluster = deleting(s.Cluster, "cluster.cluster.x-k8s.io")
	s.InfraCluster = deleting(s.InfraCluster, "openstackcluster.infrastructure.cluster.x-k8s.io", "janitor.capi.stackhpc.com")
	s.ControlPlane = deleting(s.ControlPlane, "kubeadm.controlplane.cluster.x-k8s.io")
	s.MachineDeployments[0] = *deleting(&s.MachineDeployments[0], "cluster.x-k8s.io/machinedeployment")
	for i := range s.Machines {
		s.Machines[i] = *deleting(&s.Machines[i], "machine.cluster.x-k8s.io")
	}
	s.Machines[3].Status.Conditions = append(s.Machines[3].Status.Conditions, cond2("Deleting", metav1.ConditionTrue, "DrainingNode",
		"Drain not completed yet (started at 2026-07-01T11:55:00Z):\n* Pods with deletionTimestamp that still exist: csi-cinder-controllerplugin-0"))
	return s
}

var deleteCases = []deriveCase{
	{row: "D-01", name: "everything gone", status: DeleteInProgress, want: DeleteComplete,
		snap: func(s *Snapshot) { *s = Snapshot{} }, wantExact: true, reason: ""},
	{row: "D-01", name: "leftover addons do not block", status: DeleteInProgress, want: DeleteComplete,
		snap: func(s *Snapshot) { *s = Snapshot{Addons: s.Addons} }},
	{row: "D-02", name: "release still installed", status: DeleteInProgress, want: DeleteInProgress,
		req:  func(r *Request) { r.ReleaseExists = true },
		snap: func(s *Snapshot) { *s = Snapshot{} }, wantExact: true,
		reason: "waiting for deletion of: Helm release " + stack},
	{row: "D-03", name: "deletion not started", status: DeleteInProgress, want: DeleteInProgress,
		req: func(r *Request) { r.ReleaseExists = true },
		has: []string{"waiting for deletion of: Cluster " + stack + " (its deletion has not started; the Helm release is still installed)"}},
	{row: "D-03", name: "release gone, Cluster not deleted", status: DeleteInProgress, want: DeleteInProgress,
		has: []string{"waiting for deletion of: Cluster " + stack + " (not being deleted although the Helm release is gone)"}},
	{row: "D-04", name: "machines draining", status: DeleteInProgress, want: DeleteInProgress,
		snap: func(s *Snapshot) { *s = deletingSnapshot() }, wantExact: true,
		reason: "waiting for deletion of: 2 worker machines (" + stack + "-default-worker-u3v4w, " + stack + "-default-worker-x1y2z), " +
			stack + "-default-worker-x1y2z: Drain not completed yet (started at 2026-07-01T11:55:00Z):; Pods with deletionTimestamp that still exist: csi-cinder-controllerplugin-0; " +
			"MachineDeployment " + stack + "-default-worker; 3 control plane machines (" + stack + "-control-plane-a1b2c, " + stack + "-control-plane-d3e4f, " + stack + "-control-plane-g5h6i); " +
			"KubeadmControlPlane " + cpName + " (finalizers: kubeadm.controlplane.cluster.x-k8s.io); +2 more"},
	{row: "D-05", name: "janitor holds the OpenStackCluster", status: DeleteInProgress, want: DeleteInProgress,
		snap: func(s *Snapshot) {
			d := deletingSnapshot()
			*s = Snapshot{Cluster: d.Cluster, InfraCluster: d.InfraCluster}
		}, wantExact: true,
		reason: "waiting for deletion of: OpenStackCluster " + stack + " (finalizers: openstackcluster.infrastructure.cluster.x-k8s.io, janitor.capi.stackhpc.com); Cluster " + stack + " (finalizers: cluster.cluster.x-k8s.io)"},
	{row: "D-06", name: "CAPO error while deleting", status: DeleteInProgress, want: DeleteInProgress,
		snap: func(s *Snapshot) {
			d := deletingSnapshot()
			d.InfraCluster.Status.FailureReason = str("CreateError")
			d.InfraCluster.Status.FailureMessage = str("failed to create load balancer: quota")
			d.InfraCluster.Status.Conditions = clusterv1.Conditions{cond1("Ready", "False", clusterv1.ConditionSeverityError, "DeletionFailed",
				"failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron:9696/v2.0/networks/7c1e], but got 409 instead")}
			*s = Snapshot{Cluster: d.Cluster, InfraCluster: d.InfraCluster}
		},
		has: []string{"waiting for deletion of: OpenStackCluster " + stack + ": failed to create load balancer: quota (CreateError); OpenStackCluster " + stack + ": failed to delete network: the network service refused to delete the network (HTTP 409 Conflict); OpenStackCluster " + stack + " (finalizers"}},
	{row: "D-06", name: "CAPO retrying a refused deletion (Ready false, severity Warning)", status: DeleteInProgress, want: DeleteInProgress,
		snap: func(s *Snapshot) {
			d := deletingSnapshot()
			d.InfraCluster.Status.Conditions = clusterv1.Conditions{cond1("Ready", "False", clusterv1.ConditionSeverityWarning, "OpenStackError",
				`failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron:9696/v2.0/networks/7c1e], but got 409 instead: {"NeutronError": {"type": "NetworkInUse"}}`)}
			*s = Snapshot{Cluster: d.Cluster, InfraCluster: d.InfraCluster}
		}, wantExact: true,
		reason: "waiting for deletion of: OpenStackCluster " + stack + ": failed to delete network: " +
			"the network service refused to delete the network (HTTP 409 Conflict, NetworkInUse). Ports are still in use on the cluster's network: " +
			"delete the load balancers, servers and ports you created in it, then delete the cluster again; " +
			"OpenStackCluster " + stack + " (finalizers: openstackcluster.infrastructure.cluster.x-k8s.io, janitor.capi.stackhpc.com); Cluster " + stack + " (finalizers: cluster.cluster.x-k8s.io)"},
	{row: "D-09", name: "templates and CAPI's Secrets left for the garbage collector", status: DeleteInProgress, want: DeleteInProgress,
		snap: func(s *Snapshot) {
			*s = Snapshot{Leftovers: []Leftover{
				{Kind: "OpenStackMachineTemplate", Name: stack + "-control-plane-1a2b3c4d"},
				{Kind: "KubeadmConfigTemplate", Name: stack + "-default-worker-5e6f7a8b"},
				{Kind: "OpenStackMachineTemplate", Name: stack + "-default-worker-9c0d1e2f"},
				{Kind: "Secret", Name: stack + "-kubeconfig"},
			}}
		}, wantExact: true,
		reason: "waiting for deletion of: OpenStackMachineTemplate " + stack + "-control-plane-1a2b3c4d, " + stack + "-default-worker-9c0d1e2f" +
			" (Kubernetes' garbage collector deletes it after the Cluster); KubeadmConfigTemplate " + stack + "-default-worker-5e6f7a8b" +
			" (Kubernetes' garbage collector deletes it after the Cluster); Secret " + stack + "-kubeconfig (Kubernetes' garbage collector deletes it after the Cluster)"},
	{row: "D-09", name: "leftovers past the delete timeout", status: DeleteInProgress, want: DeleteFailed,
		req: func(r *Request) { r.OperationStarted = r.Now.Add(-31 * time.Minute) },
		snap: func(s *Snapshot) {
			*s = Snapshot{Leftovers: []Leftover{{Kind: "KubeadmConfigTemplate", Name: stack + "-default-worker-5e6f7a8b"}}}
		}, wantExact: true,
		reason: "timed out after 30 minutes waiting for deletion of: KubeadmConfigTemplate " + stack + "-default-worker-5e6f7a8b (Kubernetes' garbage collector deletes it after the Cluster)"},
	{row: "D-07", name: "failed deletion finished later", status: DeleteFailed, want: DeleteComplete,
		req:  func(r *Request) { r.StatusReason = "timed out after 30 minutes waiting for deletion of: ..." },
		snap: func(s *Snapshot) { *s = Snapshot{} }, wantExact: true, reason: ""},
	{row: "D-08", name: "failed deletion, objects remain", status: DeleteFailed, want: DeleteFailed,
		req:  func(r *Request) { r.StatusReason = "helm uninstall failed: another operation is in progress" },
		snap: func(s *Snapshot) { *s = deletingSnapshot() }, wantExact: true,
		reason: "helm uninstall failed: another operation is in progress"},
}

func TestDeriveDelete(t *testing.T) { runDeriveCases(t, deleteCases) }

// untouched builds a case: status s (with a reason) comes back unchanged.
func untouched(row, s string, snap func(*Snapshot)) deriveCase {
	return deriveCase{row: row, name: s, status: s, want: s, wantExact: true, reason: "reason Magnum had",
		req: func(r *Request) { r.StatusReason = "reason Magnum had" }, snap: snap}
}

func notConverged(s *Snapshot) {
	s.MachineDeployments[0].Spec.Replicas = i32(4) // the autoscaler scaling up
	s.MachineDeployments[0].Status.ReadyReplicas = i32(2)
}

var untouchedCases = []deriveCase{
	untouched("S-01", CreateComplete, notConverged),
	untouched("S-01", UpdateComplete, notConverged),
	untouched("S-01", RollbackComplete, func(s *Snapshot) { s.InfraCluster = nil }),
	untouched("S-02", CreateFailed, nil),
	untouched("S-02", UpdateFailed, nil),
	untouched("S-02", RollbackFailed, notConverged),
	untouched("S-03", ResumeComplete, nil),
	untouched("S-03", ResumeFailed, nil),
	untouched("S-03", RestoreComplete, nil),
	untouched("S-03", SnapshotComplete, nil),
	untouched("S-03", CheckComplete, nil),
	untouched("S-03", AdoptComplete, nil),
	untouched("S-03", DeleteComplete, func(s *Snapshot) { *s = Snapshot{} }),
	untouched("S-03", "SOMETHING_NEW", nil),
}

func TestDeriveUntouchedStatuses(t *testing.T) { runDeriveCases(t, untouchedCases) }
