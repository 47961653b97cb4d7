package e2e

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// Load through the gRPC API, as Magnum's conductor and periodic job drive
// it, through the whole sidecar (Keystone, Helm, the watch cache, Leases)
// and the test bed's Cluster API controllers.
const (
	// loadClustersEnv sets how many clusters go through the cycle: small in
	// `make test`, 200 in `make soak`.
	loadClustersEnv     = "MAGNUM_CAPI_LOAD_CLUSTERS"
	defaultLoadClusters = 10
	// loadParallelEnv sets how many clusters are in flight at once (Magnum
	// runs many conductor workers).
	loadParallelEnv     = "MAGNUM_CAPI_LOAD_PARALLEL"
	defaultLoadParallel = 4
)

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestReliabilityLoad takes N clusters through create -> CREATE_COMPLETE
// -> delete -> DELETE_COMPLETE, P at a time: no call may fail, every
// cluster must reach each state, and afterwards nothing of any of them is
// left (Secrets, release records, Leases, CAPI Clusters, application
// credentials). Times are logged, never asserted.
func TestReliabilityLoad(t *testing.T) {
	n := envInt(t, loadClustersEnv, defaultLoadClusters)
	parallel := envInt(t, loadParallelEnv, defaultLoadParallel)
	clusters := make([]*cluster, n)
	owners := make([]owner, n)
	for i := range clusters {
		clusters[i] = newCluster(t, fmt.Sprintf("load-%03d", i), "v1.33.2", 1)
		owners[i] = clusters[i].owner()
	}
	before := footprintOf(t, owners...)
	start := time.Now()
	type result struct {
		stackID       string
		created, gone time.Duration
		err           error
	}
	results := make([]result, n)
	work := make(chan int)
	var done atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := &results[i]
				r.stackID, r.created, r.gone, r.err = cycle(clusters[i])
				// Progress, for the long soak run.
				if d := done.Add(1); d%int32(max(n/10, 1)) == 0 {
					t.Logf("%d/%d clusters done after %s", d, n, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	for i := range clusters {
		work <- i
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)

	var failed []string
	var toComplete, toGone []time.Duration
	for i, r := range results {
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", clusters[i].spec.Cluster.Name, r.err))
			continue
		}
		toComplete, toGone = append(toComplete, r.created), append(toGone, r.gone)
	}
	t.Logf("%d clusters, %d at a time: %s in all; create->CREATE_COMPLETE %s, delete->DELETE_COMPLETE %s; %d failed",
		n, parallel, elapsed.Round(time.Second), spread(toComplete), spread(toGone), len(failed))
	for _, f := range failed {
		t.Error(f)
	}

	for i, r := range results {
		owners[i].stackID = r.stackID
	}
	after := footprintOf(t, owners...)
	var leaked []string
	for _, change := range before.changes(after) {
		// The project's namespace is shared by all its clusters and kept
		// when the last one goes (as the StackHPC driver does).
		if strings.HasPrefix(change, "added ") && strings.Contains(change, " Namespace ") {
			continue
		}
		leaked = append(leaked, change)
	}
	for i, r := range results {
		leaked = append(leaked, after.of(orUnset(r.stackID), clusters[i].spec.Cluster.Uuid)...)
	}
	if len(leaked) > 0 {
		sort.Strings(leaked)
		t.Errorf("left behind after %d clusters came and went:\n%s", n, strings.Join(leaked, "\n"))
	}
}

// orUnset keeps an empty stack_id (a create that failed early) from
// matching every name.
func orUnset(id string) string {
	if id == "" {
		return "\x00unset"
	}
	return id
}

// cycle drives one cluster as Magnum would: CreateCluster, status polls
// until CREATE_COMPLETE, DeleteCluster, polls until DELETE_COMPLETE. It
// returns errors instead of failing the test, since it runs on a worker.
func cycle(c *cluster) (stackID string, created, gone time.Duration, err error) {
	start := time.Now()
	// The shim's create deadline ([magnum_capi] create_call_timeout).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil {
		// As Magnum: the cluster is CREATE_FAILED without a stack_id and
		// the user deletes it. Whatever the interrupted create wrote must
		// still go; the leak check afterwards says whether it did.
		err = fmt.Errorf("CreateCluster: %w", err)
		c.spec.Cluster.StatusReason = err.Error()
		c.setStatus("DELETE_IN_PROGRESS")
		ctx, cancel := callCtx()
		_, derr := driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
		cancel()
		if derr == nil {
			derr = c.poll("DELETE_COMPLETE", 5*time.Minute)
		}
		if derr != nil {
			err = fmt.Errorf("%w; then deleting it: %v", err, derr)
		}
		return "", 0, 0, err
	}
	stackID = resp.GetStackId()
	c.spec.Cluster.StackId = stackID
	if err := c.poll("CREATE_COMPLETE", 5*time.Minute); err != nil {
		return stackID, 0, 0, err
	}
	created = time.Since(start)

	start = time.Now()
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel = callCtx()
	_, err = driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		return stackID, created, 0, fmt.Errorf("DeleteCluster: %w", err)
	}
	if err := c.poll("DELETE_COMPLETE", 5*time.Minute); err != nil {
		return stackID, created, 0, err
	}
	return stackID, created, time.Since(start), nil
}

// poll is waitFor without a *testing.T: every 250 ms, answers written back.
func (c *cluster) poll(want string, timeout time.Duration) error {
	_, err := harness.WaitForStatus(driver, c.spec, want, timeout, 250*time.Millisecond)
	return err
}

// spread summarises durations as "median m, max x".
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return fmt.Sprintf("median %s, max %s", ds[len(ds)/2].Round(100*time.Millisecond), ds[len(ds)-1].Round(100*time.Millisecond))
}
