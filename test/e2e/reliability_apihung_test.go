package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestReliabilityAPIServerHung: a management API server that accepts a
// create's Secret write and never answers it (a stalled etcd, a black-holed
// load balancer) is named in the answer, which comes before the caller's
// deadline and as Unavailable, so the shim retries it and the user reads
// which dependency failed, not "the sidecar did not answer" and not the API
// server's address. Once the API answers again, the create made again (as
// the shim or the user would) succeeds and the cluster is deleted whole.
func TestReliabilityAPIServerHung(t *testing.T) {
	proxy := startKubeProxy(t, stack.Env.Config)
	viaProxy := withKubeconfig(proxy.kubeconfig(t, "hung-api"))
	hung := startSidecar(t, harness.SidecarOptions{Name: "hung-api", Configure: func(c *config.Config) {
		viaProxy(c)
		// Its Lease cannot be released while the API hangs: let it
		// expire soon, so the create made again need not wait long.
		c.Timeouts.Lock = 5 * time.Second
	}})
	t.Cleanup(func() { proxy.releaseAll() }) // before the sidecar stops: cleanups run last first
	trapped := proxy.arm(func(r *http.Request) bool {
		return r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/secrets")
	})
	c := newCluster(t, "apihung", "v1.33.2", 1)

	// Shorter than the management client's 30 s request timeout: what
	// answers in time is the sidecar keeping part of the caller's deadline
	// for its answer, not the client giving up on the request.
	const deadline = 25 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	start := time.Now()
	_, err := hung.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	elapsed := time.Since(start)
	select {
	case r := <-trapped:
		t.Logf("held %s %s; the create answered after %s: %v", r.Method, r.URL.Path, elapsed.Round(time.Millisecond), err)
	default:
		t.Fatalf("the create wrote no Secret through the proxy (answered %v)", err)
	}
	s := status.Convert(err)
	if s.Code() != codes.Unavailable {
		t.Fatalf("the create against a hung API server ended %v (%q), want Unavailable", s.Code(), s.Message())
	}
	if want := "the management cluster's Kubernetes API is not answering"; s.Message() != want {
		t.Errorf("the create's message %q, want %q", s.Message(), want)
	}
	if elapsed >= deadline {
		t.Errorf("the answer came after the caller's deadline (%s)", elapsed)
	}

	proxy.releaseAll()
	res := retryAsTheShim(time.Now().Add(createBudget), func(ctx context.Context) createResult {
		resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
		return createResult{stackID: resp.GetStackId(), err: err}
	}, t.Logf)
	if res.err != nil {
		t.Fatalf("the create made again once the API answers: %v", res.err)
	}
	c.spec.Cluster.StackId = res.stackID
	c.remove(t, driver)
	if left := footprintOf(t, c.owner()).of(c.spec.Cluster.StackId, c.spec.Cluster.Uuid); len(left) > 0 {
		t.Errorf("left after DELETE_COMPLETE:\n%s", strings.Join(left, "\n"))
	}
}
