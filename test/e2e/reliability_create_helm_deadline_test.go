package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestCreateDeadlineDuringHelm: the shim's deadline for CreateCluster
// passes while Helm is writing the release (its write of the control plane
// hangs). Helm finishes regardless, so the cluster is being built: the
// create answers success with the stack_id (Magnum keeps the cluster
// CREATE_IN_PROGRESS, never CREATE_FAILED), the status path says
// CREATE_IN_PROGRESS while Helm is held, and, once it is let through,
// follows the cluster to CREATE_COMPLETE.
func TestCreateDeadlineDuringHelm(t *testing.T) {
	t.Parallel() // its own sidecar, fault injector and clusters; with the other parallel tests, after the sequential ones
	faults := &faultInjector{}
	sc := startSidecar(t, harness.SidecarOptions{Name: "create-helm-deadline", KubeTransport: faults.wrap})
	c := newCluster(t, "helm-deadline", "v1.33.2", 1)
	c.via = sc.Driver
	f := newFault("POST", "/kubeadmcontrolplanes", true)
	faults.arm(f)
	defer faults.arm(nil)
	defer f.let()

	ctx, cancel := context.WithTimeout(context.Background(), shortCall)
	resp, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	select {
	case <-f.fired:
	default:
		t.Fatalf("the create never wrote the control plane (answered %v)", err)
	}
	if err != nil {
		t.Fatalf("CreateCluster whose deadline passed during Helm's writes answered %v (%v): Magnum would mark CREATE_FAILED a cluster that is being built",
			status.Code(err), err)
	}
	c.spec.Cluster.StackId = resp.GetStackId()
	t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })

	sctx, scancel := callCtx()
	st, err := sc.Driver.GetClusterStatus(sctx, &pb.GetClusterStatusRequest{Spec: c.spec})
	scancel()
	if err != nil {
		t.Fatalf("GetClusterStatus: %v", err)
	}
	if got, reason := st.GetStatus().GetStatus(), st.GetStatus().GetStatusReason(); got != "CREATE_IN_PROGRESS" ||
		!strings.Contains(reason, "Helm release "+c.spec.Cluster.StackId+" still being written") {
		t.Errorf("status while Helm is held: %s (%s), want CREATE_IN_PROGRESS saying Helm still writes the release", got, reason)
	}
	t.Logf("while Helm is held: %s: %s", st.GetStatus().GetStatus(), st.GetStatus().GetStatusReason())
	f.let()
	c.waitFor(t, "CREATE_COMPLETE", 4*time.Minute)
}
