package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/realcapi"
)

// TestStatusWithRealControllers re-verifies docs/status.md against the real
// Cluster API v1.13 controllers of the test bed (test/capicontrollers):
// each subtest drives a cluster through the driver as Magnum would and
// checks what the sidecar answers at each checkpoint, where capistatus must
// also give the same answer from the objects the controllers wrote (see
// status_record_test.go; MAGNUM_CAPI_RECORD_STATUS=1 records them for
// capistatus's tests).
func TestStatusWithRealControllers(t *testing.T) {
	t.Parallel()
	t.Run("lifecycle", statusLifecycle)
	t.Run("failing reconcile", statusFailingReconcile)
	t.Run("kubelet version", statusKubeletVersion)
	t.Run("nova", statusNova)
	t.Run("octavia", statusOctavia)
	t.Run("failed machine, stuck deletion", statusFailedMachine)
}

// statusLifecycle: create, scale up, scale down removing a named node,
// rolling upgrade of the control plane and the workers, a server lost and
// remediated by a MachineHealthCheck, delete.
func statusLifecycle(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "real-life", "v1.33.2", 2)
	// Servers take a few seconds to build, so that the rollouts can be
	// caught in progress.
	slow := realcapi.FaultRule{Cluster: "real-life-*", BootDelay: "3s"}
	if err := stack.Faults.Set(context.Background(), t.Name(), slow); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })
	create(t, c)
	cleanupCluster(t, c)
	created := time.Now()

	c.waitUntil(t, "control plane in progress", 3*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "control plane: ")
	})
	checkpoint(t, c, "create-in-progress", created, "C-11", "C-15", "C-22", "C-30")
	c.waitUntil(t, "create complete", 3*time.Minute, isStatus("CREATE_COMPLETE"))
	st := checkpoint(t, c, "create-complete", created, "C-01", "N-01", "N-12", "N-14", "A-01", "A-03", "H-03")
	if st.GetStatus() != "CREATE_COMPLETE" || c.spec.Cluster.CoeVersion != "v1.33.2" || !strings.HasPrefix(c.spec.Cluster.ApiAddress, "https://127.0.0.1:") {
		t.Fatalf("create: %s %q api %s coe %s", st.GetStatus(), st.GetStatusReason(), c.spec.Cluster.ApiAddress, c.spec.Cluster.CoeVersion)
	}
	assertHealth(t, c, "HEALTHY")

	// Scale up: a third worker.
	resize(t, c, 3, nil)
	started := time.Now()
	c.waitUntil(t, "scale up in progress", time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "node group default-worker: ")
	})
	checkpoint(t, c, "scale-up-in-progress", started, "C-23", "N-02")
	c.waitUntil(t, "scale up complete", 3*time.Minute, isStatus("UPDATE_COMPLETE"))
	checkpoint(t, c, "scale-up-complete", started, "C-02")
	if got := c.nodegroup("default-worker"); got.NodeCount != 3 || len(got.NodeAddresses) != 3 {
		t.Fatalf("after scale up: %d nodes, addresses %v", got.NodeCount, got.NodeAddresses)
	}

	// Scale down naming the machine to remove: its address goes, the
	// others stay.
	workers := machinesOf(t, c, "default-worker")
	victim := workers[1]
	keep := addressesExcept(workers, victim.Name)
	resize(t, c, 2, []string{victim.Name})
	started = time.Now()
	c.waitUntil(t, "scale down complete", 3*time.Minute, isStatus("UPDATE_COMPLETE"))
	checkpoint(t, c, "scale-down-complete", started, "C-02", "N-14")
	if got := c.nodegroup("default-worker").NodeAddresses; strings.Join(got, ",") != strings.Join(keep, ",") {
		t.Errorf("after removing %s: addresses %v, want %v", victim.Name, got, keep)
	}

	// Rolling upgrade of the control plane and the workers.
	upgrade(t, c, "v1.34.1")
	started = time.Now()
	c.waitUntil(t, "upgrade in progress", time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "upgrading from v1.33.2 to v1.34.1")
	})
	checkpoint(t, c, "upgrade-in-progress", started, "C-17", "C-18", "C-19", "C-24", "N-05", "N-13")
	c.waitUntil(t, "upgrade complete", 4*time.Minute, isStatus("UPDATE_COMPLETE"))
	checkpoint(t, c, "upgrade-complete", started, "C-02", "A-03")
	if c.spec.Cluster.CoeVersion != "v1.34.1" {
		t.Errorf("after the upgrade coe_version = %s", c.spec.Cluster.CoeVersion)
	}

	// A worker's server vanishes from Nova: CAPO fails its machine, the
	// cloud controller manager deletes its Node, and the MachineHealthCheck
	// has the MachineSet replace it. The cluster stays UPDATE_COMPLETE;
	// health says what happened, then recovers.
	lost := machinesOf(t, c, "default-worker")[0]
	if err := stack.Faults.Set(context.Background(), t.Name(), slow, realcapi.FaultRule{Cluster: c.spec.Cluster.StackId, ServerLost: lost.Name}); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, c, "remediation seen", 2*time.Minute, func(h *pb.GetClusterHealthResponse) bool {
		return h.GetHealthStatus() == "UNHEALTHY" && h.GetHealthStatusReason()["default-worker"] != "ok"
	})
	checkpoint(t, c, "server-lost", time.Time{}, "S-01", "H-08")
	waitHealth(t, c, "recovered", 3*time.Minute, func(h *pb.GetClusterHealthResponse) bool { return h.GetHealthStatus() == "HEALTHY" })
	if ms := machinesOf(t, c, "default-worker"); len(ms) != 2 || ms[0].Name == lost.Name || ms[1].Name == lost.Name {
		t.Errorf("after remediation: workers %v", names(ms))
	}

	startDelete(t, c)
	started = time.Now()
	c.waitUntil(t, "deletion under way", time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "waiting for deletion of: ")
	})
	checkpoint(t, c, "delete-in-progress", started, "D-04", "N-06")
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)
}

// statusFailingReconcile: the workload cluster's API endpoint stops
// answering, then Magnum asks for an upgrade. The control plane controller
// cannot reconcile, so it never observes the new spec.
func statusFailingReconcile(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "real-unreachable", "v1.33.2", 1)
	create(t, c)
	cleanupCluster(t, c)
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	rule := realcapi.FaultRule{Cluster: c.spec.Cluster.StackId, APIServerDown: true}
	if err := stack.Faults.Set(context.Background(), t.Name(), rule); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })
	waitHealth(t, c, "API server unreachable", 2*time.Minute, func(h *pb.GetClusterHealthResponse) bool { return h.GetHealthStatus() == "UNHEALTHY" })
	checkpoint(t, c, "api-unreachable", time.Time{}, "H-04")

	upgrade(t, c, "v1.34.1")
	started := time.Now()
	c.waitUntil(t, "the upgrade stuck behind the unreachable API server", 2*time.Minute, func(s *pb.ClusterStatus) bool {
		return s.GetStatus() == "UPDATE_IN_PROGRESS" && strings.Contains(s.GetStatusReason(), "KubeadmControlPlane") &&
			strings.Contains(s.GetStatusReason(), "cannot reach")
	})
	st := checkpoint(t, c, "upgrade-unreachable", started, "C-15", "C-32")
	if st.GetStatus() != "UPDATE_IN_PROGRESS" || !strings.Contains(st.GetStatusReason(), "KubeadmControlPlane") {
		t.Errorf("upgrade while unreachable: %s %q", st.GetStatus(), st.GetStatusReason())
	}
	if err := stack.Faults.Set(context.Background(), t.Name()); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
}

// statusKubeletVersion: the image's kubelet is older than the template's
// kube_version says.
func statusKubeletVersion(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "real-kubelet", "v1.33.2", 1)
	if err := stack.Faults.Set(context.Background(), t.Name(), realcapi.FaultRule{Cluster: "real-kubelet-*", KubeletVersion: "v1.32.5"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })
	create(t, c)
	cleanupCluster(t, c)
	created := time.Now()
	c.waitUntil(t, "create complete", 3*time.Minute, isStatus("CREATE_COMPLETE"))
	// The control plane's version is what KubeadmControlPlane rolled out,
	// not what a kubelet reports (docs/status.md A-03).
	st := checkpoint(t, c, "kubelet-version-mismatch", created, "A-03")
	if st.GetStatus() != "CREATE_COMPLETE" || c.spec.Cluster.CoeVersion != "v1.33.2" {
		t.Errorf("kubelet v1.32.5 under spec v1.33.2: %s coe_version %s, want CREATE_COMPLETE v1.33.2", st.GetStatus(), c.spec.Cluster.CoeVersion)
	}
}

// statusNova: Nova refuses the servers (quota), or builds them into ERROR.
func statusNova(t *testing.T) {
	t.Parallel()
	quota := newCluster(t, "real-nova-quota", "v1.33.2", 1)
	broken := newCluster(t, "real-nova-error", "v1.33.2", 1)
	if err := stack.Faults.Set(context.Background(), t.Name(),
		realcapi.FaultRule{Cluster: "real-nova-quota-*", ServerQuota: true},
		realcapi.FaultRule{Cluster: "real-nova-error-*", ServerError: "*-default-worker-*"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })
	for _, c := range []*cluster{quota, broken} {
		create(t, c)
		cleanupCluster(t, c)
	}
	created := time.Now()
	quota.waitUntil(t, "Nova's refusal shown", 2*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "quota is used up")
	})
	st := checkpoint(t, quota, "nova-quota", created, "C-33", "C-15", "C-23")
	t.Logf("Nova quota: %s %q", st.GetStatus(), st.GetStatusReason())
	tenantReads(t, st.GetStatusReason(), "The project's instances quota is used up")
	broken.waitUntil(t, "control plane up", 3*time.Minute, func(s *pb.ClusterStatus) bool {
		return !strings.Contains(s.GetStatusReason(), "control plane: ")
	})
	broken.waitUntil(t, "the server in ERROR shown", 2*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "is in ERROR state")
	})
	st = checkpoint(t, broken, "nova-error", created, "C-33", "C-23")
	t.Logf("server ERROR: %s %q", st.GetStatus(), st.GetStatusReason())
}

// statusOctavia: the API load balancer is refused, CAPO retrying, then
// giving up.
func statusOctavia(t *testing.T) {
	t.Parallel()
	retrying := newCluster(t, "real-lb-retry", "v1.33.2", 1)
	terminal := newCluster(t, "real-lb-terminal", "v1.33.2", 1)
	if err := stack.Faults.Set(context.Background(), t.Name(),
		realcapi.FaultRule{Cluster: "real-lb-retry-*", InfraFailure: realcapi.OctaviaQuota},
		realcapi.FaultRule{Cluster: "real-lb-terminal-*", InfraFailure: realcapi.OctaviaQuota, InfraFailureTerminal: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })
	for _, c := range []*cluster{retrying, terminal} {
		create(t, c)
		cleanupCluster(t, c)
	}
	created := time.Now()
	retrying.waitUntil(t, "quota shown", 2*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "Quota has been met")
	})
	checkpoint(t, retrying, "octavia-quota-retrying", created, "C-13", "H-06")
	terminal.waitUntil(t, "failed", 2*time.Minute, isStatus("CREATE_FAILED"))
	st := checkpoint(t, terminal, "octavia-quota-terminal", created, "F-01", "N-03")
	if !strings.Contains(st.GetStatusReason(), "(UpdateError)") {
		t.Errorf("terminal Octavia failure: %q", st.GetStatusReason())
	}
	tenantReads(t, st.GetStatusReason(), "The project's load balancer quota is used up")
}

// tenantReads: a status_reason built from OpenStack's refusal names the
// remedy and none of the URLs, hosts and ids CAPO quoted (the guide: never
// internal URLs, hostnames or ids).
func tenantReads(t *testing.T, reason, remedy string) {
	t.Helper()
	if !strings.Contains(reason, remedy) {
		t.Errorf("status_reason %q does not say %q", reason, remedy)
	}
	for _, leak := range []string{"://", "example.test", "Expected HTTP response code", "{\""} {
		if strings.Contains(reason, leak) {
			t.Errorf("status_reason %q shows the tenant %q", reason, leak)
		}
	}
}

// statusFailedMachine: with auto-healing off (no MachineHealthCheck) a
// worker's server vanishes from Nova; CAPO fails its machine and nothing
// replaces it, so a resize stays in progress and names the failed machine.
// Then Neutron refuses to delete the network, so the deletion is stuck on
// the OpenStackCluster's finalizer.
func statusFailedMachine(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "real-stuck", "v1.33.2", 1)
	c.spec.Cluster.Labels["auto_healing_enabled"] = "false"
	create(t, c)
	cleanupCluster(t, c)
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	t.Cleanup(func() { _ = stack.Faults.Set(context.Background(), t.Name()) })

	lost := machinesOf(t, c, "default-worker")[0]
	if err := stack.Faults.Set(context.Background(), t.Name(), realcapi.FaultRule{Cluster: c.spec.Cluster.StackId, ServerLost: lost.Name}); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, c, "server lost", 2*time.Minute, func(h *pb.GetClusterHealthResponse) bool {
		return h.GetHealthStatus() == "UNHEALTHY" && h.GetHealthStatusReason()["default-worker"] != "ok"
	})
	resize(t, c, 2, nil)
	started := time.Now()
	c.waitUntil(t, "the failed machine named", 2*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.Contains(s.GetStatusReason(), "machine "+lost.Name+" failed")
	})
	st := checkpoint(t, c, "machine-failed", started, "C-27", "H-08")
	if st.GetStatus() != "UPDATE_IN_PROGRESS" || !strings.HasPrefix(st.GetStatusReason(), "waiting for: machine "+lost.Name+" failed") {
		t.Errorf("a failed machine is not named first: %s %q", st.GetStatus(), st.GetStatusReason())
	}
	// The status names the failed machine as soon as the MachineDeployment
	// has its new size, which can be before its MachineSet made the second
	// Machine: wait for two workers, then the failed one must be one of them.
	var ms []clusterv1.Machine
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ms = machinesOf(t, c, "default-worker")
		return len(ms) >= 2, nil
	})
	if len(ms) != 2 || ms[0].Name != lost.Name && ms[1].Name != lost.Name {
		t.Errorf("without auto-healing the failed machine must stay: workers %v", names(ms))
	}

	if err := stack.Faults.Set(context.Background(), t.Name(),
		realcapi.FaultRule{Cluster: c.spec.Cluster.StackId, ServerLost: lost.Name, StuckDeletion: true}); err != nil {
		t.Fatal(err)
	}
	startDelete(t, c)
	started = time.Now()
	// The test bed's provider writes Neutron's refusal onto the
	// OpenStackCluster a moment after the rest is gone: wait for both (the
	// first poll that shows only the OpenStackCluster may precede it).
	c.waitUntil(t, "only the infrastructure left, and why", 3*time.Minute, func(s *pb.ClusterStatus) bool {
		return strings.HasPrefix(s.GetStatusReason(), "waiting for deletion of: OpenStackCluster ") &&
			strings.Contains(s.GetStatusReason(), "NetworkInUse")
	})
	st = checkpoint(t, c, "delete-stuck", started, "D-05", "D-06", "N-08")
	if !strings.Contains(st.GetStatusReason(), "NetworkInUse") || !strings.Contains(st.GetStatusReason(), "(finalizers: ") {
		t.Errorf("a stuck deletion must say what holds it and why: %q", st.GetStatusReason())
	}
	tenantReads(t, st.GetStatusReason(), "delete the load balancers, servers and ports you created in it, then delete the cluster again")
	if err := stack.Faults.Set(context.Background(), t.Name()); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)
}

// startDelete is Magnum's cluster delete: the status, then the call.
func startDelete(t *testing.T, c *cluster) {
	t.Helper()
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel := callCtx()
	_, err := driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
}

func create(t *testing.T, c *cluster) {
	t.Helper()
	ctx, cancel := callCtx()
	created, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil {
		t.Fatalf("CreateCluster %s: %v", c.spec.Cluster.Name, err)
	}
	c.spec.Cluster.StackId = created.GetStackId()
}

// cleanupCluster deletes c after the test unless the test did.
func cleanupCluster(t *testing.T, c *cluster) {
	t.Cleanup(func() {
		if c.spec.Cluster.Status != "DELETE_COMPLETE" {
			deleteCluster(t, driver, c)
		}
	})
}

func isStatus(want string) func(*pb.ClusterStatus) bool {
	return func(s *pb.ClusterStatus) bool { return s.GetStatus() == want }
}

func resize(t *testing.T, c *cluster, workers int32, remove []string) {
	t.Helper()
	req := c.resizeRequest(workers)
	req.NodesToRemove = remove
	ctx, cancel := callCtx()
	_, err := driver.ResizeCluster(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
}

// upgrade is Magnum's cluster upgrade to a template of another version.
func upgrade(t *testing.T, c *cluster, version string) {
	t.Helper()
	req := c.upgradeRequest(version)
	req.MaxBatchSize, req.NodegroupUuid = 1, c.nodegroup("default-worker").Uuid
	ctx, cancel := callCtx()
	_, err := driver.UpgradeCluster(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("UpgradeCluster: %v", err)
	}
}

// machinesOf lists a node group's Machines (not being deleted), by name.
func machinesOf(t *testing.T, c *cluster, group string) []clusterv1.Machine {
	t.Helper()
	list := &clusterv1.MachineList{}
	ns := "magnum-" + strings.ReplaceAll(stack.Info.Project.ID, "-", "")
	if err := stack.Env.Client.List(context.Background(), list, client.InNamespace(ns),
		client.MatchingLabels{"capi.stackhpc.com/cluster": c.spec.Cluster.StackId, "capi.stackhpc.com/node-group": group}); err != nil {
		t.Fatal(err)
	}
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func names(ms []clusterv1.Machine) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// addressesExcept are the InternalIPs of the machines but one, in name order.
func addressesExcept(ms []clusterv1.Machine, except string) []string {
	var out []string
	for _, m := range ms {
		if m.Name == except {
			continue
		}
		for _, a := range m.Status.Addresses {
			if a.Type == clusterv1.MachineAddressType(corev1.NodeInternalIP) {
				out = append(out, a.Address)
			}
		}
	}
	return out
}

func assertHealth(t *testing.T, c *cluster, want string) {
	t.Helper()
	h := health(t, c)
	if h.GetHealthStatus() != want {
		t.Errorf("health %s, want %s: %v", h.GetHealthStatus(), want, h.GetHealthStatusReason())
	}
}

func health(t *testing.T, c *cluster) *pb.GetClusterHealthResponse {
	t.Helper()
	ctx, cancel := callCtx()
	defer cancel()
	resp, err := driver.GetClusterHealth(ctx, &pb.GetClusterHealthRequest{Spec: c.spec})
	if err != nil {
		t.Fatalf("GetClusterHealth: %v", err)
	}
	return resp
}

func waitHealth(t *testing.T, c *cluster, what string, timeout time.Duration, ok func(*pb.GetClusterHealthResponse) bool) *pb.GetClusterHealthResponse {
	t.Helper()
	timeout = harness.Patience(timeout)
	deadline := time.Now().Add(timeout)
	var h *pb.GetClusterHealthResponse
	for time.Now().Before(deadline) {
		if h = health(t, c); ok(h) {
			return h
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s; health %s %v", what, timeout, h.GetHealthStatus(), h.GetHealthStatusReason())
	return nil
}
