package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// BenchmarkCreateConcurrent is the concurrency target: 200
// CreateCluster RPCs for different clusters at once. All must succeed with
// their release deployed, and none may wait behind another cluster's Lease:
// from the sidecar's own requests, every cluster's Lease was free at its
// first attempt (its first read found none and its create succeeded, with
// no read of a held Lease or conflict before). Then all 200 are deleted
// and nothing of theirs may be left: Leases, Secrets, Helm records, CAPI
// Clusters.
func BenchmarkCreateConcurrent(b *testing.B) {
	w := stackFor(b)
	n := envInt(b, "MAGNUM_CAPI_BENCH_CONCURRENT", 200)
	ns := helmvalues.Namespace("magnum", w.stack.Info.Project.ID)

	clusters := batch(b, w, "concurrent", n)

	w.counter.reset()
	took := make([]time.Duration, n)
	wall, errs := burst(n, func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		t0 := time.Now()
		err := clusters[i].create(ctx, w.driver)
		took[i] = time.Since(t0)
		return err
	})

	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			b.Errorf("create %d: %v", i, err)
		}
	}
	notDeployed := 0
	for _, c := range clusters {
		if c.Spec.Cluster.StackId == "" {
			continue
		}
		rel, ok, err := latestRelease(context.Background(), w.kube, ns, c.Spec.Cluster.StackId)
		if err != nil || !ok || rel.status != "deployed" {
			notDeployed++
			b.Errorf("release %s after its create: %q (found %v, %v); want deployed", c.Spec.Cluster.StackId, rel.status, ok, err)
		}
	}
	waits, leases := leaseWaits(w.counter.requests())
	// A create that failed after taking its Lease (Keystone, say) counts
	// too; every successful one must have taken one.
	if leases < n-failed {
		b.Errorf("the sidecar took %d Leases for %d successful creates", leases, n-failed)
	}
	for _, name := range waits {
		b.Errorf("the create holding Lease %s waited for it", name)
	}
	summary := fmt.Sprintf("%d creates at once: %d failed, %d releases not deployed, %d of %d Leases waited for; wall %s; per create p50 %s p99 %s max %s",
		n, failed, notDeployed, len(waits), leases, wall.Round(time.Millisecond), percentile(took, 50).Round(time.Millisecond),
		percentile(took, 99).Round(time.Millisecond), percentile(took, 100).Round(time.Millisecond))
	b.Log(summary)
	progress(summary)
	b.ReportMetric(float64(n-failed), "succeeded")
	b.ReportMetric(float64(len(waits)), "lease-waits")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(percentile(took, 50).Seconds(), "p50-s")
	b.ReportMetric(percentile(took, 99).Seconds(), "p99-s")
	b.ReportMetric(0, "ns/op")

	// The deletes clean up (the target is about creates), 20 at a time: 200
	// at once on this 2-core machine kept the API server busy past the
	// sidecar's 30 s request timeout for Helm's release lookups.
	deleteTook := deleteAll(b, w.driver, clusters, 15*time.Minute)
	b.Logf("deleted %d clusters, %d at a time, in %s (DELETE_COMPLETE through status polls)", n-failed, deleteParallel, deleteTook.Round(time.Second))
	for _, leak := range leftovers(b, w.kube, ns, clusters) {
		b.Errorf("left after delete: %s", leak)
	}
}

// deleteParallel is how many of a benchmark's clusters are deleted at a
// time.
const deleteParallel = 20

// deleteAll deletes the clusters that were created, deleteParallel at a
// time, each to DELETE_COMPLETE within timeout; failures are the
// benchmark's errors. It returns how long it took.
func deleteAll(b *testing.B, driver pb.DriverServiceClient, clusters []*cluster, timeout time.Duration) time.Duration {
	start := time.Now()
	errs := make([]error, len(clusters))
	slots := make(chan struct{}, deleteParallel)
	var wg sync.WaitGroup
	for i, c := range clusters {
		if c.Spec.Cluster.StackId == "" {
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = c.delete(driver, timeout)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Error(err)
		}
	}
	return time.Since(start)
}

// leaseWaits reads the sidecar's requests for per-cluster Leases and
// returns the Leases whose acquisition did not succeed at the first
// attempt, and how many Leases were taken. An attempt reads the Lease and,
// when there is none, creates it; reading one that exists (held) or a
// conflict on create before the Lease's first successful create is a wait.
func leaseWaits(reqs []request) (waited []string, taken int) {
	type state struct{ acquired, waited bool }
	seen := map[string]*state{}
	var order []string
	for _, r := range reqs {
		if !strings.Contains(r.path, "/leases") {
			continue
		}
		name := r.name
		if r.method != http.MethodPost {
			name = r.path[strings.LastIndex(r.path, "/")+1:]
		}
		if !strings.HasPrefix(name, kube.LeasePrefix) {
			continue
		}
		s := seen[name]
		if s == nil {
			s = &state{}
			seen[name] = s
			order = append(order, name)
		}
		if s.acquired {
			continue // renewals and the release
		}
		switch {
		case r.method == http.MethodPost && r.code == http.StatusCreated:
			s.acquired = true
		case r.method == http.MethodPost && r.code == http.StatusConflict,
			r.method == http.MethodGet && r.code == http.StatusOK:
			s.waited = true
		}
	}
	for _, name := range order {
		if seen[name].acquired {
			taken++
		}
		if seen[name].waited {
			waited = append(waited, name)
		}
	}
	return waited, taken
}

// leftovers lists what is left of deleted clusters in ns: their Leases,
// Secrets (credentials, CAs, Helm records) and CAPI Clusters.
func leftovers(b *testing.B, kc client.Client, ns string, clusters []*cluster) []string {
	ctx := context.Background()
	ids := map[string]bool{}
	uuids := map[string]bool{}
	for _, c := range clusters {
		ids[c.Spec.Cluster.StackId] = true
		uuids[c.Spec.Cluster.Uuid] = true
	}
	var out []string
	var leases coordinationv1.LeaseList
	if err := kc.List(ctx, &leases, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for _, l := range leases.Items {
		if ids[strings.TrimPrefix(l.Name, kube.LeasePrefix)] {
			out = append(out, "Lease "+l.Name)
		}
	}
	var secrets corev1.SecretList
	if err := kc.List(ctx, &secrets, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for _, s := range secrets.Items {
		if uuids[s.Labels[certs.ClusterUUIDLabel]] || (s.Labels["owner"] == "helm" && ids[s.Labels["name"]]) {
			out = append(out, "Secret "+s.Name)
		}
	}
	var capi clusterv1.ClusterList
	if err := kc.List(ctx, &capi, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	for _, c := range capi.Items {
		if ids[c.Name] {
			out = append(out, "Cluster "+c.Name)
		}
	}
	return out
}
