package capistatus

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// nodeGroupCase is one row of docs/status.md about node groups: the request's
// node group `ng` (looked up by name in the result) must come out as `want`.
type nodeGroupCase struct {
	row, name string
	status    string // the cluster's status
	req       func(*Request)
	snap      func(*Snapshot)
	ng        string
	want      NodeGroupResult // UUID and Name are filled from the request
}

func (c nodeGroupCase) run(t *testing.T) {
	req := request(c.status)
	if c.req != nil {
		c.req(&req)
	}
	snap := converged()
	if c.snap != nil {
		c.snap(&snap)
	}
	res := Derive(req, snap, Config{})
	for _, got := range res.NodeGroups {
		if got.Name != c.ng {
			continue
		}
		want := c.want
		want.Name = c.ng
		want.UUID = got.UUID
		if want.NodeAddresses == nil {
			want.NodeAddresses = []string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("node group %s:\n got  %+v\n want %+v", c.ng, got, want)
		}
		return
	}
	t.Fatalf("no node group %q in %+v", c.ng, res.NodeGroups)
}

// setNG changes Magnum's node group `name`.
func setNG(name string, f func(*NodeGroup)) func(*Request) {
	return func(r *Request) {
		for i := range r.NodeGroups {
			if r.NodeGroups[i].Name == name {
				f(&r.NodeGroups[i])
			}
		}
	}
}

func reqs(fs ...func(*Request)) func(*Request) {
	return func(r *Request) {
		for _, f := range fs {
			f(r)
		}
	}
}

var (
	cpAddrs     = []string{"10.0.0.11", "10.0.0.12", "10.0.0.13"}
	workerAddrs = []string{"10.0.0.22", "10.0.0.21"} // machine name order: ...-u3v4w, ...-x1y2z
)

// withGroup adds a worker node group "gpu" (Magnum status ngs) and, with n > 0,
// its MachineDeployment and n machines.
func withGroup(ngs string, isDefault bool, n int) (func(*Request), func(*Snapshot)) {
	return func(r *Request) {
			r.NodeGroups = append(r.NodeGroups, NodeGroup{UUID: "uuid-gpu", Name: "gpu", Role: "worker", Status: ngs, StatusReason: "before", IsDefault: isDefault, ChartName: "gpu", NodeCount: 1})
		}, func(s *Snapshot) {
			if n == 0 {
				return
			}
			s.MachineDeployments = append(s.MachineDeployments, deployment("gpu", int32(n)))
			for i := 0; i < n; i++ {
				s.Machines = append(s.Machines, workerMachine("gpu", "m"+string(rune('a'+i))+"000", "10.0.1."+string(rune('1'+i))))
			}
		}
}

func gpuReq(ngs string, isDefault bool) func(*Request) {
	r, _ := withGroup(ngs, isDefault, 0)
	return r
}
func gpuSnap(n int) func(*Snapshot) { _, s := withGroup("", false, n); return s }

var nodeGroupCases = []nodeGroupCase{
	{row: "N-01", name: "new group rolled out", status: UpdateInProgress, ng: "gpu",
		req: gpuReq(CreateInProgress, false), snap: gpuSnap(1),
		want: NodeGroupResult{Status: CreateComplete, NodeCount: 1, NodeAddresses: []string{"10.0.1.1"}}},
	{row: "N-02", name: "rollout incomplete", status: UpdateInProgress, ng: "default-worker",
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Status.UpToDateReplicas = i32(1)
			s.Machines[4].Status.Conditions[1] = cond2("UpToDate", metav1.ConditionFalse, "NotUpToDate", "")
		},
		want: NodeGroupResult{Status: UpdateInProgress, StatusReason: "waiting for: 1 of 2 machines up to date, 1 machine of an older spec", NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-03", name: "cluster failed first", status: CreateInProgress, ng: "default-worker",
		snap: func(s *Snapshot) {
			s.InfraCluster.Status.FailureMessage = str("failed to create network: quota exceeded")
			s.MachineDeployments[0].Status.ReadyReplicas = i32(0)
		},
		want: NodeGroupResult{Status: CreateFailed, StatusReason: "OpenStackCluster " + stack + " failed: failed to create network: quota exceeded", NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-04", name: "cluster timed out", status: CreateInProgress, ng: "default-worker",
		req:  func(r *Request) { r.OperationStarted = t0.Add(-2 * time.Hour) },
		snap: func(s *Snapshot) { s.MachineDeployments[0].Status.ReadyReplicas = i32(0) },
		want: NodeGroupResult{Status: CreateFailed, StatusReason: "timed out after 60 minutes waiting for: 0 of 2 machines ready", NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-05", name: "control plane complete", status: UpdateInProgress, ng: "default-master",
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 3, NodeAddresses: cpAddrs}},
	{row: "N-05", name: "control plane upgrading", status: UpdateInProgress, ng: "default-master",
		snap: func(s *Snapshot) { s.ControlPlane.Status.Version = "v1.32.5" },
		want: NodeGroupResult{Status: UpdateInProgress, StatusReason: "waiting for: upgrading from v1.32.5 to v1.33.2", NodeCount: 3, NodeAddresses: cpAddrs}},
	{row: "N-06", name: "group deleting", status: UpdateInProgress, ng: "gpu",
		req: gpuReq(DeleteInProgress, false), snap: gpuSnap(2),
		want: NodeGroupResult{Status: DeleteInProgress, StatusReason: "waiting for deletion of: MachineDeployment " + stack + "-gpu, 2 machines (" + stack + "-gpu-ma000, " + stack + "-gpu-mb000)",
			NodeCount: 1, NodeAddresses: []string{"10.0.1.1", "10.0.1.2"}}},
	{row: "N-06", name: "MachineDeployment gone, machines left", status: UpdateInProgress, ng: "gpu",
		req: gpuReq(DeleteInProgress, false),
		snap: func(s *Snapshot) {
			now := metav1.NewTime(t0)
			m := workerMachine("gpu", "ma000", "10.0.1.1")
			m.DeletionTimestamp = &now
			s.Machines = append(s.Machines, m)
		},
		want: NodeGroupResult{Status: DeleteInProgress, StatusReason: "waiting for deletion of: 1 machine (" + stack + "-gpu-ma000)", NodeCount: 1}},
	{row: "N-07", name: "deleted group destroyed", status: UpdateInProgress, ng: "gpu",
		req:  gpuReq(DeleteInProgress, false),
		want: NodeGroupResult{Status: DeleteComplete, NodeCount: 1, Destroy: true}},
	{row: "N-07", name: "failed deletion finished later", status: UpdateFailed, ng: "gpu",
		req:  gpuReq(DeleteFailed, false),
		want: NodeGroupResult{Status: DeleteComplete, NodeCount: 1, Destroy: true}},
	{row: "N-08", name: "default group with the cluster", status: DeleteInProgress, ng: "default-worker",
		snap: func(s *Snapshot) { *s = Snapshot{} },
		want: NodeGroupResult{Status: DeleteComplete, NodeCount: 2}},
	{row: "N-08", name: "default control plane group with the cluster", status: DeleteInProgress, ng: "default-master",
		snap: func(s *Snapshot) { *s = Snapshot{} },
		want: NodeGroupResult{Status: DeleteComplete, NodeCount: 3}},
	{row: "N-09", name: "deletion timed out", status: UpdateInProgress, ng: "gpu",
		req: reqs(gpuReq(DeleteInProgress, false), func(r *Request) { r.OperationStarted = t0.Add(-3 * time.Hour) }),
		snap: func(s *Snapshot) {
			gpuSnap(1)(s)
			s.MachineDeployments = s.MachineDeployments[:1]
		},
		want: NodeGroupResult{Status: DeleteFailed, StatusReason: "timed out after 120 minutes waiting for deletion of: 1 machine (" + stack + "-gpu-ma000)",
			NodeCount: 1, NodeAddresses: []string{"10.0.1.1"}}},
	{row: "N-10", name: "complete group being autoscaled", status: CreateComplete, ng: "default-worker",
		req: setNG("default-worker", func(n *NodeGroup) { n.StatusReason = "" }),
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Spec.Replicas = i32(3)
			s.MachineDeployments[0].Status.Replicas = i32(3)
			s.MachineDeployments[0].Status.ReadyReplicas = i32(2)
		},
		want: NodeGroupResult{Status: CreateComplete, NodeCount: 3, NodeAddresses: workerAddrs}},
	{row: "N-11", name: "failed group stays failed", status: UpdateFailed, ng: "default-worker",
		req:  setNG("default-worker", func(n *NodeGroup) { n.StatusReason = "resize rejected: max_node_count is 5" }),
		want: NodeGroupResult{Status: UpdateFailed, StatusReason: "resize rejected: max_node_count is 5", NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-12", name: "autoscaler's count reaches Magnum", status: UpdateComplete, ng: "default-worker",
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Spec.Replicas = i32(5)
			s.MachineDeployments[0].Status.Replicas = i32(3)
		},
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 5, NodeAddresses: workerAddrs}},
	{row: "N-12", name: "Magnum's count while in progress", status: UpdateInProgress, ng: "default-worker",
		req: setNG("default-worker", func(n *NodeGroup) { n.NodeCount = 4 }),
		want: NodeGroupResult{Status: UpdateInProgress, StatusReason: "waiting for: 2 machines, want 4, 2 of 4 machines ready",
			NodeCount: 4, NodeAddresses: workerAddrs},
		snap: func(s *Snapshot) { s.MachineDeployments[0].Spec.Replicas = i32(4) }},
	{row: "N-12", name: "Magnum's count until the spec is observed", status: UpdateComplete, ng: "default-worker",
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Spec.Replicas = i32(7)
			s.MachineDeployments[0].Generation = 3
		},
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-12", name: "Magnum's count when failed", status: UpdateFailed, ng: "default-worker",
		req:  setNG("default-worker", func(n *NodeGroup) { n.NodeCount = 6 }),
		want: NodeGroupResult{Status: UpdateFailed, NodeCount: 6, NodeAddresses: workerAddrs}},
	{row: "N-12", name: "autoscaled group without spec.replicas", status: UpdateComplete, ng: "default-worker",
		snap: func(s *Snapshot) {
			s.MachineDeployments[0].Spec.Replicas = nil
			s.MachineDeployments[0].Annotations = map[string]string{autoscalerMinSize: "2", "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "6"}
		},
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-13", name: "control plane surge is not a size", status: UpdateInProgress, ng: "default-master",
		snap: func(s *Snapshot) {
			s.ControlPlane.Status.Replicas = i32(4)
			s.Machines = append(s.Machines, cpMachine("z9y8x", "10.0.0.14"))
		},
		want: NodeGroupResult{Status: UpdateInProgress, StatusReason: "waiting for: 4 machines, want 3", NodeCount: 3,
			NodeAddresses: []string{"10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14"}}},
	{row: "N-13", name: "control plane count once settled", status: UpdateComplete, ng: "default-master",
		req:  setNG("default-master", func(n *NodeGroup) { n.NodeCount = 1 }),
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 3, NodeAddresses: cpAddrs}},
	{row: "N-14", name: "addresses: internal first, external fallback, deleting skipped", status: UpdateComplete, ng: "default-worker",
		snap: func(s *Snapshot) {
			now := metav1.NewTime(t0)
			s.Machines[3].Status.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineExternalIP, Address: "198.51.100.7"}}
			s.Machines[4].Status.Addresses = nil
			extra := workerMachine("default-worker", "p0000", "10.0.0.23")
			extra.DeletionTimestamp = &now
			s.Machines = append(s.Machines, extra)
		},
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 2, NodeAddresses: []string{"198.51.100.7"}}},
	{row: "N-15", name: "MachineDeployment name cut to 63", status: UpdateInProgress, ng: "a-very-long-node-group-name-for-gpus-x",
		req: func(r *Request) {
			r.NodeGroups = append(r.NodeGroups, NodeGroup{Name: "a-very-long-node-group-name-for-gpus-x", Role: "worker", Status: CreateInProgress, ChartName: "a-very-long-node-group-name-for-gpus-x", NodeCount: 1})
		},
		snap: func(s *Snapshot) {
			md := deployment("x", 1)
			md.Name = deploymentName(stack, "a-very-long-node-group-name-for-gpus-x")
			md.Labels[labelChartNodeGroup] = "a-very-long-node-group-name-for-gpus-x"
			s.MachineDeployments = append(s.MachineDeployments, md)
			m := workerMachine("x", "q0000", "10.0.2.1")
			m.Labels[labelChartNodeGroup] = "a-very-long-node-group-name-for-gpus-x"
			s.Machines = append(s.Machines, m)
		},
		want: NodeGroupResult{Status: CreateComplete, NodeCount: 1, NodeAddresses: []string{"10.0.2.1"}}},
	{row: "N-15", name: "MachineDeployment found by label", status: UpdateInProgress, ng: "gpu",
		req: gpuReq(CreateInProgress, false),
		snap: func(s *Snapshot) {
			gpuSnap(1)(s)
			s.MachineDeployments[1].Name = "renamed-md"
		},
		want: NodeGroupResult{Status: CreateComplete, NodeCount: 1, NodeAddresses: []string{"10.0.1.1"}}},
	{row: "N-17", name: "resize started while the cluster is still UPDATE_FAILED", status: UpdateFailed, ng: "default-worker",
		req: reqs(setNG("default-worker", func(n *NodeGroup) { n.Status, n.NodeCount = UpdateInProgress, 3 }),
			func(r *Request) { r.OperationStarted = t0.Add(-10 * time.Hour) }),
		snap: func(s *Snapshot) { s.MachineDeployments[0].Spec.Replicas = i32(3) },
		want: NodeGroupResult{Status: UpdateInProgress, StatusReason: "waiting for: 2 machines, want 3, 2 of 3 machines ready", NodeCount: 3, NodeAddresses: workerAddrs}},
	{row: "N-17", name: "and completes on its own", status: UpdateFailed, ng: "default-worker",
		req:  setNG("default-worker", func(n *NodeGroup) { n.Status = UpdateInProgress }),
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 2, NodeAddresses: workerAddrs}},
	{row: "N-16", name: "no chart name: Magnum name", status: UpdateInProgress, ng: "default-worker",
		req:  setNG("default-worker", func(n *NodeGroup) { n.ChartName = "" }),
		want: NodeGroupResult{Status: UpdateComplete, NodeCount: 2, NodeAddresses: workerAddrs}},
}

func TestDeriveNodeGroups(t *testing.T) {
	for _, c := range nodeGroupCases {
		t.Run(c.row+" "+c.name, c.run)
	}
}

func TestDeploymentName(t *testing.T) {
	for _, c := range []struct{ stack, ng, want string }{
		{stack, "default-worker", stack + "-default-worker"},
		// 17 + 1 + 46 = 64: cut to 63, then the trailing "-" trimmed.
		{stack, strings.Repeat("a", 44) + "-b", stack + "-" + strings.Repeat("a", 44)},
	} {
		if got := deploymentName(c.stack, c.ng); got != c.want || len(got) > 63 {
			t.Errorf("deploymentName(%q, %q) = %q, want %q", c.stack, c.ng, got, c.want)
		}
	}
}

// endpointCase is a row about api_address and coe_version.
type endpointCase struct {
	row, name   string
	req         func(*Request)
	snap        func(*Snapshot)
	wantAddress string
	wantVersion string
}

var endpointCases = []endpointCase{
	{row: "A-01", name: "from the Cluster", wantAddress: "https://203.0.113.10:6443", wantVersion: "v1.33.2"},
	{row: "A-01", name: "IPv6 and no port", snap: func(s *Snapshot) {
		s.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "2001:db8::10"}
	}, wantAddress: "https://[2001:db8::10]:6443", wantVersion: "v1.33.2"},
	{row: "A-01", name: "hostname and port", snap: func(s *Snapshot) {
		s.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "k8s.example.org", Port: 443}
	}, wantAddress: "https://k8s.example.org:443", wantVersion: "v1.33.2"},
	{row: "A-02", name: "Cluster has no endpoint yet", snap: func(s *Snapshot) {
		s.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{}
		s.InfraCluster.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "203.0.113.99", Port: 6443}
	}, wantAddress: "https://203.0.113.99:6443", wantVersion: "v1.33.2"},
	{row: "A-02", name: "nothing known: Magnum's value kept", req: func(r *Request) {
		r.CurrentAPIAddress, r.CurrentCOEVersion = "https://203.0.113.5:6443", "v1.31.0"
	}, snap: func(s *Snapshot) { *s = Snapshot{} }, wantAddress: "https://203.0.113.5:6443", wantVersion: "v1.31.0"},
	{row: "A-03", name: "oldest machine version", snap: func(s *Snapshot) {
		s.ControlPlane.Status.Version = "v1.32.5"
	}, wantAddress: "https://203.0.113.10:6443", wantVersion: "v1.32.5"},
	{row: "A-03", name: "no machine yet: spec version", snap: func(s *Snapshot) {
		s.ControlPlane.Status.Version = ""
	}, wantAddress: "https://203.0.113.10:6443", wantVersion: "v1.33.2"},
	{row: "A-03", name: "KubeadmControlPlane briefly missing", req: func(r *Request) { r.CurrentCOEVersion = "v1.33.1" },
		snap: func(s *Snapshot) { s.ControlPlane = nil }, wantAddress: "https://203.0.113.10:6443", wantVersion: "v1.33.1"},
}

func TestDeriveEndpoint(t *testing.T) {
	for _, c := range endpointCases {
		t.Run(c.row+" "+c.name, func(t *testing.T) {
			req := request(CreateComplete)
			if c.req != nil {
				c.req(&req)
			}
			snap := converged()
			if c.snap != nil {
				c.snap(&snap)
			}
			got := Derive(req, snap, Config{})
			if got.APIAddress != c.wantAddress || got.COEVersion != c.wantVersion {
				t.Errorf("api_address, coe_version = %q, %q; want %q, %q", got.APIAddress, got.COEVersion, c.wantAddress, c.wantVersion)
			}
		})
	}
}
