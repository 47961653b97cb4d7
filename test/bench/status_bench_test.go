package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// BenchmarkStatus measures the status targets at 100, 1,000 and 2,000
// clusters' objects in the management cluster ($MAGNUM_CAPI_BENCH_CLUSTERS
// overrides the list). One cluster is created through the sidecar and built
// to CREATE_COMPLETE by the test bed's real Cluster API controllers; they are
// then stopped and the cluster's watched objects (with their ready statuses
// and its Helm record) copied under other names, 100 clusters a project
// namespace.
// At each size:
//
//   - the in-process sidecar answers GetClusterStatus over its unix
//     socket for random clusters (MAGNUM_CAPI_BENCH_POLLS, default 2,000):
//     p50/p99 latency (target p99 < 1 ms at 2,000) and API requests it
//     sent per poll, counted at its client transport (target 0);
//   - a fresh `magnum-capi serve` process syncs, answers the same polls,
//     and its RSS is read from /proc after the sync and after the polls
//     (target ≤ 250 MiB at 2,000).
//
// Every answer must be CREATE_COMPLETE.
func BenchmarkStatus(b *testing.B) {
	w := stackFor(b)
	sizes := []int{100, 1000, 2000}
	if v := os.Getenv("MAGNUM_CAPI_BENCH_CLUSTERS"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("MAGNUM_CAPI_BENCH_CLUSTERS=%q: want positive integers separated by commas", v)
			}
			sizes = append(sizes, n)
		}
	}
	polls := envInt(b, "MAGNUM_CAPI_BENCH_POLLS", 2000)
	// A budget for loading each size, on a machine too busy to load them
	// all: the size is then measured with what was loaded.
	var budget time.Duration
	if v := os.Getenv("MAGNUM_CAPI_BENCH_LOAD_BUDGET"); v != "" {
		var err error
		if budget, err = time.ParseDuration(v); err != nil || budget <= 0 {
			b.Fatalf("MAGNUM_CAPI_BENCH_LOAD_BUDGET=%q: want a positive duration (10m)", v)
		}
	}
	bin := binary(b, w)

	tc := newCluster(b, w, "template", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := tc.create(ctx, w.driver); err != nil {
		b.Fatal(err)
	}
	if err := tc.waitFor(w.driver, "CREATE_COMPLETE", 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	// Nothing may reconcile the copies: they are complete clusters whose
	// owners, machines and instances do not exist.
	if err := w.stack.CAPI.Stop(); err != nil {
		b.Fatalf("stopping the Cluster API controllers: %v", err)
	}
	tmpl, err := readTemplate(ctx, w.kube, tc)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("template cluster %s: %d watched objects copied per cluster (%s)", tmpl.stackID, len(tmpl.objects), tmpl.sizes())
	load, err := newLoader(w, tmpl)
	if err != nil {
		b.Fatal(err)
	}

	for _, n := range sizes {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			have := len(load.clones)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			if err := load.growTo(ctx, w, n, budget); err != nil {
				b.Fatal(err)
			}
			if len(load.clones) > have {
				b.Logf("loaded %d clusters (%d objects) in %s with %d workers", len(load.clones)-have, (len(load.clones)-have)*len(tmpl.objects),
					load.took[len(load.took)-1].Round(time.Second), loadWorkers)
			}
			if len(load.clones) < n {
				b.Logf("MEASURED AT %d CLUSTERS, NOT %d: the load budget %s ran out", len(load.clones), n, budget)
				n = len(load.clones)
			}
			clones := load.clones[:n]
			progress("status at %d clusters: measuring", n)
			// The shared sidecar has seen the newest copy.
			last := &cluster{harness.ClusterRequest{Spec: proto.Clone(clones[n-1].spec).(*pb.ClusterSpec)}}
			if err := last.waitFor(w.driver, "CREATE_COMPLETE", 5*time.Minute); err != nil {
				b.Fatal(err)
			}

			poll(b, w.driver, clones, 100) // warm up
			w.counter.reset()
			lat := poll(b, w.driver, clones, polls)
			// Reads count against the target; the watches client-go's
			// reflectors re-establish every 5-10 minutes are not requests
			// of the polls, and are reported apart.
			var reqs []request
			watches := 0
			for _, r := range w.counter.requests() {
				if r.watch {
					watches++
					continue
				}
				reqs = append(reqs, r)
				b.Logf("API request during the polls: %s %s -> %d", r.method, r.path, r.code)
			}
			p50, p99 := percentile(lat, 50), percentile(lat, 99)
			b.Logf("in-process sidecar, %d polls: p50 %s p99 %s max %s; %d API reads, %d watches re-established",
				polls, p50, p99, percentile(lat, 100), len(reqs), watches)

			proc := startProcess(b, w, bin)
			lastProc := &cluster{harness.ClusterRequest{Spec: proto.Clone(clones[n-1].spec).(*pb.ClusterSpec)}}
			if err := lastProc.waitFor(proc.Driver, "CREATE_COMPLETE", 5*time.Minute); err != nil {
				b.Fatal(err)
			}
			rssSynced, _, err := proc.memory()
			if err != nil {
				b.Fatal(err)
			}
			histBefore, err := proc.statusHistogram()
			if err != nil {
				b.Fatal(err)
			}
			cpu := proc.cpuProfile(os.Getenv("MAGNUM_CAPI_BENCH_PROFILES"), fmt.Sprintf("cpu-%d.pprof", n), 2*time.Second)
			plat := poll(b, proc.Driver, clones, polls)
			if err := <-cpu; err != nil {
				b.Fatal(err)
			}
			histAfter, err := proc.statusHistogram()
			if err != nil {
				b.Fatal(err)
			}
			// The server's own time per call: without the client, the
			// socket and the scheduling of two processes on the machine.
			within, p99Bound := histogramShare(histBefore, histAfter, 0.001, 0.99)
			rssPolled, hwm, err := proc.memory()
			if err != nil {
				b.Fatal(err)
			}
			anon, file, err := proc.rssParts()
			if err != nil {
				b.Fatal(err)
			}
			live, err := proc.heap(os.Getenv("MAGNUM_CAPI_BENCH_PROFILES"), fmt.Sprintf("%d.pprof", n))
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("magnum-capi serve: SERVING after %s; RSS %.0f MiB synced, %.0f MiB after %d polls (peak %.0f MiB), live heap %.0f MiB (RSS after the polls: %.0f MiB its own, %.0f MiB pages of the binary); its polls p50 %s p99 %s at the client; in the server %.1f%% within 1 ms, p99 <= %s",
				proc.synced.Round(time.Millisecond), rssSynced, rssPolled, polls, hwm, live, anon, file, percentile(plat, 50), percentile(plat, 99),
				100*within, time.Duration(p99Bound*float64(time.Second)))

			b.ReportMetric(float64(n), "clusters")
			b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
			b.ReportMetric(float64(len(reqs))/float64(polls), "api-requests/poll")
			b.ReportMetric(float64(watches), "watch-restarts")
			b.ReportMetric(rssSynced, "rss-synced-MiB")
			b.ReportMetric(rssPolled, "rss-polled-MiB")
			b.ReportMetric(hwm, "rss-peak-MiB")
			b.ReportMetric(live, "heap-live-MiB")
			b.ReportMetric(anon, "rss-anon-MiB")
			b.ReportMetric(file, "rss-file-MiB")
			b.ReportMetric(float64(percentile(plat, 99).Microseconds()), "proc-p99-µs")
			b.ReportMetric(100*within, "proc-server-%≤1ms")
			b.ReportMetric(p99Bound*1e6, "proc-server-p99≤µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// poll asks driver for the status of count random clones, one call at a
// time as Magnum's periodic job does, each as Magnum holds it while in
// progress; every answer must be CREATE_COMPLETE. It returns each call's
// latency, measured at the client.
func poll(b *testing.B, driver pb.DriverServiceClient, clones []*clone, count int) []time.Duration {
	b.Helper()
	lat := make([]time.Duration, 0, count)
	for range count {
		c := clones[rand.IntN(len(clones))]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		resp, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		took := time.Since(start)
		cancel()
		if err != nil {
			b.Fatalf("GetClusterStatus %s: %v", c.spec.Cluster.StackId, err)
		}
		if s := resp.GetStatus(); s.GetStatus() != "CREATE_COMPLETE" || len(s.GetNodegroups()) != 2 {
			b.Fatalf("status of %s = %v, want CREATE_COMPLETE with 2 node groups", c.spec.Cluster.StackId, s)
		}
		lat = append(lat, took)
	}
	return lat
}
