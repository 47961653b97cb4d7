package e2e

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestTwoSidecarsRaceOnOneCluster: two sidecars get the same create, then
// the same resize, at the same moment (as two conductors would after a
// retried RPC). Each operation waits for the other's Lease and then runs:
// both succeed, Keystone has one application credential for the cluster,
// and the release one revision per operation, none failed.
func TestTwoSidecarsRaceOnOneCluster(t *testing.T) {
	other := startSidecar(t, harness.SidecarOptions{Name: "racer"})
	ns := projectNamespace()
	leases := watchLeases(t, stack.Env.Config, ns)
	c := newCluster(t, "race", "v1.33.2", 1)

	var stackIDs [2]string
	both(t, "CreateCluster", func(i int, d pb.DriverServiceClient) error {
		ctx, cancel := callCtx()
		defer cancel()
		resp, err := d.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
		stackIDs[i] = resp.GetStackId()
		return err
	}, driver, other.Driver)
	if stackIDs[0] != stackIDs[1] || stackIDs[0] == "" {
		t.Fatalf("the two creates named %q and %q", stackIDs[0], stackIDs[1])
	}
	stackID := stackIDs[0]
	c.spec.Cluster.StackId = stackID
	// One credential in Keystone, and it is the one the Secret holds.
	creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid)
	var secret corev1.Secret
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-cloud-credentials"}, &secret); err != nil {
		t.Fatal(err)
	}
	if len(creds) != 1 || !strings.Contains(string(secret.Data["clouds.yaml"]), creds[0].ID) {
		t.Errorf("%d application credentials for the cluster after two creates, want 1, the one in the Secret", len(creds))
	}
	if got := statuses(history(t, stack.Env.Config, ns, stackID)); got != "1:superseded 2:deployed" {
		t.Errorf("release history after two creates: %s, want 1:superseded 2:deployed", got)
	}
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)

	req := c.resizeRequest(2)
	both(t, "ResizeCluster", func(_ int, d pb.DriverServiceClient) error {
		ctx, cancel := callCtx()
		defer cancel()
		_, err := d.ResizeCluster(ctx, req)
		return err
	}, driver, other.Driver)
	if got := statuses(history(t, stack.Env.Config, ns, stackID)); got != "1:superseded 2:superseded 3:superseded 4:deployed" {
		t.Errorf("release history after two resizes: %s, want one revision per operation, none failed", got)
	}
	holders := leases.holders(kube.LeasePrefix + stackID)
	if distinct(holders) != 4 {
		t.Errorf("lease holders %v: want four operations, each holding it in turn", holders)
	}
	if l := leases.leaseLabels(kube.LeasePrefix + stackID); l["magnum.openstack.org/cluster-uuid"] != c.spec.Cluster.Uuid || l["magnum.openstack.org/project-id"] == "" {
		t.Errorf("lease labels %v", l)
	}
	c.waitOn(t, driver, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.NodeCount != 2 {
		t.Errorf("workers %d after the resize, want 2", ng.NodeCount)
	}
	c.remove(t, other.Driver)
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 0 {
		t.Errorf("%d application credentials left after DELETE_COMPLETE", len(creds))
	}
}

// TestOperationsWaitOrAbort: while cluster A's Lease is held (a long
// operation elsewhere), an operation on cluster B runs at once and an
// operation on A waits; one whose deadline comes first is Aborted (saying
// another operation is in progress, not who holds the Lease) and changes nothing; once the Lease is free the waiting one
// succeeds.
func TestOperationsWaitOrAbort(t *testing.T) {
	other := startSidecar(t, harness.SidecarOptions{Name: "waiter"})
	ns := projectNamespace()
	leases := watchLeases(t, stack.Env.Config, ns)
	a, b := newCluster(t, "wait-a", "v1.33.2", 1), newCluster(t, "wait-b", "v1.33.2", 1)
	aID := a.create(t, driver)
	b.create(t, driver)

	kc, err := kube.Connect("e2e", stack.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	const holder = "e2e-test/long-operation"
	held, err := kc.AcquireLock(context.Background(), kube.LockRequest{Namespace: ns, Name: aID, Holder: holder, TTL: 15 * time.Second}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	revisionsA := len(history(t, stack.Env.Config, ns, aID))

	// The waiting resize is Magnum's: the shim retries it if its wait for
	// the Lease ends Aborted. Its budget is twice call_timeout: on a loaded
	// machine (CI beside other test runs) B's resize alone took 30 s, and
	// what is checked here is that A's resize waits and then succeeds.
	waiting := make(chan error, 1)
	go func() {
		res := retryAsTheShim(time.Now().Add(90*time.Second), func(ctx context.Context) createResult {
			_, err := other.Driver.ResizeCluster(ctx, a.resizeRequest(2))
			return createResult{err: err}
		}, t.Logf)
		waiting <- res.err
	}()

	ctx, cancel := callCtx()
	_, err = driver.ResizeCluster(ctx, b.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("resizing cluster B while A's lease is held: %v", err)
	}
	select {
	case err := <-waiting:
		t.Fatalf("the resize of A returned (%v) while its lease was held", err)
	default:
	}
	if got := leases.mostAtOnce(); got < 2 {
		t.Errorf("at most %d leases existed at once: B's operation did not run beside A's", got)
	}

	short, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	_, err = driver.UpdateCluster(short, &pb.UpdateClusterRequest{Context: a.ctx, Spec: a.spec})
	cancel()
	// The holder (a sidecar's host and pid) is for the operator's log, not
	// the tenant's status_reason.
	if s, _ := status.FromError(err); s.Code() != codes.Aborted || !strings.Contains(s.Message(), "in progress") || strings.Contains(s.Message(), holder) {
		t.Errorf("an update of A with 8s to go: %v, want Aborted saying another operation is in progress, without the holder %s", err, holder)
	}
	if got := len(history(t, stack.Env.Config, ns, aID)); got != revisionsA {
		t.Errorf("A has %d revisions after the aborted update, had %d", got, revisionsA)
	}

	if err := held.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waiting:
		if err != nil {
			t.Fatalf("the waiting resize of A: %v", err)
		}
	case <-time.After(45 * time.Second):
		t.Fatal("the resize of A did not finish after its lease was released")
	}
	if got := statuses(history(t, stack.Env.Config, ns, aID)); got != "1:superseded 2:deployed" {
		t.Errorf("A's history %s", got)
	}
	for _, c := range []*cluster{a, b} {
		c.waitOn(t, driver, "UPDATE_COMPLETE", 3*time.Minute)
	}
	for _, c := range []*cluster{a, b} {
		c.remove(t, driver)
	}
}

// both runs call on two sidecars at the same moment and fails the test if
// either fails.
func both(t *testing.T, what string, call func(int, pb.DriverServiceClient) error, drivers ...pb.DriverServiceClient) {
	t.Helper()
	start := make(chan struct{})
	errs := make([]error, len(drivers))
	var wg sync.WaitGroup
	for i, d := range drivers {
		wg.Go(func() {
			<-start
			errs[i] = call(i, d)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("%s on two sidecars at once: %v", what, err)
	}
}

func distinct(s []string) int {
	seen := map[string]bool{}
	for _, v := range s {
		seen[v] = true
	}
	return len(seen)
}
