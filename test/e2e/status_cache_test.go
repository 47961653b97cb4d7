package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestStatusPollsMakeNoAPIRequests: a sidecar answers status and health of
// a synced cluster from its watch cache: 100 polls of each
// make no request to the API server, counted at the sidecar's own client
// transport. The read-your-writes guard lists the cluster's objects once
// after each write of the sidecar, and never again. The GitOps hand-off is
// on (its Argo CD Secret in the management cluster): it writes once per
// completion, however often Magnum polls that completion.
func TestStatusPollsMakeNoAPIRequests(t *testing.T) {
	counter := &requestCounter{}
	ensureNamespace(t, argoCDNamespace)
	sc := startSidecar(t, harness.SidecarOptions{Metrics: true, KubeTransport: counter.wrap, Configure: func(c *config.Config) {
		c.ArgoCD = config.ArgoCD{Enabled: true, RegisterByDefault: true, Namespace: argoCDNamespace, Project: argoCDProject}
	}})
	c := newCluster(t, "polls", "v1.33.2", 2)
	ctx, cancel := callCtx()
	created, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil {
		t.Fatalf("CreateCluster: %v", err)
	}
	c.spec.Cluster.StackId = created.GetStackId()
	t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })
	c.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)

	// Magnum polls a cluster in progress; the answer is complete every time.
	polled := proto.Clone(c.spec).(*pb.ClusterSpec)
	polled.Cluster.Status = "CREATE_IN_PROGRESS"
	for _, ng := range polled.Nodegroups {
		ng.Status = "CREATE_IN_PROGRESS"
	}
	if n, _ := counter.count(); n == 0 {
		t.Fatal("the counter saw no request while the cluster was created: it is not on the sidecar's connection")
	}
	c.via = sc.Driver
	argoSecret(t, c, func(*corev1.Secret) bool { return true }) // the hand-off is on: the polls below show it is then free
	// Once more: an addon may still be taking a values source written
	// after its install (the test bed's addon provider then upgrades it),
	// which the status rightly shows as in progress.
	c.waitOn(t, sc.Driver, "CREATE_COMPLETE", time.Minute)
	counter.reset()
	start := time.Now()
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := sc.Driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: polled})
		cancel()
		if err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		if s := resp.GetStatus(); s.GetStatus() != "CREATE_COMPLETE" || s.GetApiAddress() == "" || len(s.GetNodegroups()) != 2 {
			t.Fatalf("poll %d: %v", i, s)
		}
	}
	statusTook := time.Since(start)
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := sc.Driver.GetClusterHealth(ctx, &pb.GetClusterHealthRequest{Spec: polled})
		cancel()
		if err != nil || resp.GetHealthStatus() != "HEALTHY" {
			t.Fatalf("health poll %d: %v %v", i, resp, err)
		}
	}
	if seen := pollRequests(counter, c.spec.Cluster.StackId); len(seen) != 0 {
		t.Errorf("200 polls made %d API requests:\n%s", len(seen), strings.Join(seen, "\n"))
	}
	t.Logf("100 GetClusterStatus polls in %s (%s each, over gRPC)", statusTook.Round(time.Millisecond), (statusTook / 100).Round(time.Microsecond))

	// A write of the sidecar: the first answers that would report it done
	// list the cluster's objects once to check the cache has caught up;
	// polls after that are free again.
	c.nodegroup("default-worker").NodeCount = 3
	c.spec.Cluster.NodeCount = 3
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	c.nodegroup("default-worker").Status = "UPDATE_IN_PROGRESS"
	ctx, cancel = callCtx()
	_, err = sc.Driver.ResizeCluster(ctx, &pb.ResizeClusterRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: c.nodegroup("default-worker").GetUuid(), NodeCount: 3})
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	ctx, cancel = callCtx()
	first, err := sc.Driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if got := first.GetStatus().GetStatus(); got != "UPDATE_IN_PROGRESS" {
		t.Errorf("status right after the resize = %s (%s), want UPDATE_IN_PROGRESS", got, first.GetStatus().GetStatusReason())
	}
	c.waitOn(t, sc.Driver, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.NodeCount != 3 || len(ng.NodeAddresses) != 3 {
		t.Errorf("default-worker after the resize: %d nodes, addresses %v", ng.NodeCount, ng.NodeAddresses)
	}
	counter.reset()
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := sc.Driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		cancel()
		if err != nil {
			t.Fatalf("poll %d after the resize: %v", i, err)
		}
	}
	if seen := pollRequests(counter, c.spec.Cluster.StackId); len(seen) != 0 {
		t.Errorf("100 polls after the resize completed made %d API requests:\n%s", len(seen), strings.Join(seen, "\n"))
	}
}

// pollRequests is what the counter saw, less the hand-off reconciler's
// reads of stackID's record and kubeconfig: the resize's Cluster and
// control plane events queue the cluster there, on the same connection,
// whenever the controllers write them, polls or not.
func pollRequests(counter *requestCounter, stackID string) []string {
	_, seen := counter.count()
	var polls []string
	for _, r := range seen {
		if strings.HasPrefix(r, "GET ") && (strings.Contains(r, "/secrets/"+stackID+"-argocd?") || strings.Contains(r, "/secrets/"+stackID+"-kubeconfig?")) {
			continue
		}
		polls = append(polls, r)
	}
	return polls
}

// TestStatusAfterRestartWaitsForSync: a sidecar that has just started and
// not yet listed the management cluster does not answer from its empty
// cache (that would say "Cluster not found"): it answers Unavailable before
// the caller's deadline, or, given time, waits for the sync and answers the
// truth.
func TestStatusAfterRestartWaitsForSync(t *testing.T) {
	c := completeCluster(t)
	reads := &readGate{open: make(chan struct{})}
	sc := startSidecar(t, harness.SidecarOptions{Metrics: true, KubeTransport: reads.wrap, WaitListening: true})

	// Not serving while the caches sync.
	hc := sc.Health
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	var health *healthpb.HealthCheckResponse
	var err error
	for ctx.Err() == nil {
		if health, err = hc.Check(ctx, &healthpb.HealthCheckRequest{Service: pb.DriverService_ServiceDesc.ServiceName}); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health while syncing = %v, %v; want NOT_SERVING", health, err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Second)
	start := time.Now()
	_, err = sc.Driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
	took := time.Since(start)
	cancel()
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "still syncing") {
		t.Fatalf("status before the sync = %v, want Unavailable (still syncing)", err)
	}
	if took < 2*time.Second {
		t.Errorf("gave up after %s; want it to wait for the sync most of the 3s deadline", took)
	}

	// A poll that has time waits for the sync and gets the truth.
	type answer struct {
		resp *pb.GetClusterStatusResponse
		err  error
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		resp, err := sc.Driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		done <- answer{resp, err, time.Since(start)}
	}()
	hold := 700 * time.Millisecond
	time.Sleep(hold)
	select {
	case a := <-done:
		t.Fatalf("answered %v (%v) while the cache could not sync", a.resp, a.err)
	default:
	}
	reads.release()
	a := <-done
	if a.err != nil {
		t.Fatalf("status after the sync: %v", a.err)
	}
	if s := a.resp.GetStatus(); s.GetStatus() != "CREATE_COMPLETE" || s.GetApiAddress() != c.spec.Cluster.ApiAddress {
		t.Errorf("status after the sync = %v, want CREATE_COMPLETE at %s", s, c.spec.Cluster.ApiAddress)
	}
	if a.took < hold {
		t.Errorf("answered after %s, before the cache could sync (%s)", a.took, hold)
	}
}

var (
	completeOnce    sync.Once
	completeShared  *cluster
	completeFailure string
)

// completeCluster is a cluster created through the shared sidecar and
// CREATE_COMPLETE, shared by the tests that only read it.
func completeCluster(t *testing.T) *cluster {
	t.Helper()
	completeOnce.Do(func() {
		c := newCluster(t, "complete", "v1.33.2", 2)
		ctx, cancel := callCtx()
		created, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
		cancel()
		if err != nil {
			completeFailure = fmt.Sprintf("CreateCluster: %v", err)
			return
		}
		c.spec.Cluster.StackId = created.GetStackId()
		c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
		completeShared = c
	})
	if completeShared == nil {
		t.Fatalf("the shared complete cluster could not be made: %s", completeFailure)
	}
	return completeShared
}

// deleteCluster deletes a test's cluster and waits until it is gone, so
// the test stack is left as it was found.
func deleteCluster(t *testing.T, client pb.DriverServiceClient, c *cluster) {
	t.Helper()
	c.spec.Cluster.Status = "DELETE_IN_PROGRESS"
	for _, ng := range c.spec.Nodegroups {
		ng.Status = "DELETE_IN_PROGRESS"
	}
	ctx, cancel := callCtx()
	_, err := client.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Errorf("DeleteCluster: %v", err)
		return
	}
	c.waitOn(t, client, "DELETE_COMPLETE", 3*time.Minute)
}

// requestCounter counts the requests a sidecar sends to the API server.
type requestCounter struct {
	mu   sync.Mutex
	seen []string
}

func (c *requestCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return statusRoundTripper(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.seen = append(c.seen, req.Method+" "+req.URL.String())
		c.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (c *requestCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = nil
}

func (c *requestCounter) count() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen), append([]string(nil), c.seen...)
}

// readGate holds the sidecar's reads of objects (lists, and the watches
// client-go's informers list through), not API discovery, until released:
// a management cluster that answers slowly after a restart.
type readGate struct {
	once sync.Once
	open chan struct{}
}

func (g *readGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *readGate) wrap(next http.RoundTripper) http.RoundTripper {
	return statusRoundTripper(func(req *http.Request) (*http.Response, error) {
		segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
		discovery := (segs[0] == "api" && len(segs) <= 2) || (segs[0] == "apis" && len(segs) <= 3)
		if req.Method == http.MethodGet && !discovery {
			select {
			case <-g.open:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		return next.RoundTrip(req)
	})
}

type statusRoundTripper func(*http.Request) (*http.Response, error)

func (f statusRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
