package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// BenchmarkPeerBurst is the burst: n creates (default 50) at once
// through one sidecar process (the real magnum-capi binary, as deploy/
// runs it) against n of the peer's `helm upgrade --install` processes at
// once, one burst each, ours first, each on a settled stack (settle: the
// peer's starts once every cluster of ours is CREATE_COMPLETE, as ours
// starts once the template's is). Reported: the wall time until every
// release is deployed (ours: every RPC answered, each after its install;
// peer: every process exited), and memory: the sidecar's highest RSS during
// its burst (sampled every 100 ms) against the sum of the peer processes'
// peak RSS (each one's own, from the kernel's rusage: an upper bound on
// what they held at once); and how many of each burst's consistent LISTs of
// Secrets the API server served from etcd instead of its watch cache (each
// reads the whole namespace's Secrets: the sign of a stack that had not
// settled). Targets: ≥ 5 × less memory, wall ≤ 0.5 ×.
func BenchmarkPeerBurst(b *testing.B) {
	w := stackFor(b)
	peerHelm(b)
	n := envInt(b, "MAGNUM_CAPI_BENCH_BURST", 50)
	ns := helmvalues.Namespace("magnum", w.stack.Info.Project.ID)
	p := startProcess(b, w, binary(b, w))
	rssBefore, _, err := p.memory()
	if err != nil {
		b.Fatal(err)
	}

	// One create first, untimed: the values the peer's processes install.
	warm := newCluster(b, w, "burst-template", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	if err := warm.create(ctx, p.Driver); err != nil {
		b.Fatal(err)
	}
	template, ok, err := latestRelease(ctx, w.kube, ns, warm.Spec.Cluster.StackId)
	cancel()
	if err != nil || !ok {
		b.Fatalf("the template's release: found %v, %v", ok, err)
	}
	clusters := append(batch(b, w, "burst", n), warm)
	settle(b, p.Driver, clusters[n:], 10*time.Minute)
	fallbacks := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		f, err := secretListFallbacks(ctx, w.stack.Env.Config)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	before := fallbacks()

	sampler := sampleMemory(map[string]int{"sidecar": p.Pid()}, 100*time.Millisecond)
	oursWall, oursFailed := burst(n, func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		return clusters[i].create(ctx, p.Driver)
	})
	peak := sampler.stop()
	for i, err := range oursFailed {
		if err != nil {
			b.Errorf("our create %d: %v", i, err)
		}
	}

	oursFallbacks := fallbacks() - before
	settled := settle(b, p.Driver, clusters, 10*time.Minute)
	before = fallbacks()

	names := make([]string, n)
	peerRSS := make([]float64, n)
	peerWall, peerFailed := burst(n, func(i int) error {
		names[i] = fmt.Sprintf("burst-peer-%03d-", i)
		names[i] += strings.Repeat("x", max(0, len(warm.Spec.Cluster.StackId)-len(names[i])))
		values, err := renamedValues(template.values, warm.Spec.Cluster.StackId, names[i])
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		run, err := peerDeploy(ctx, b, w, names[i], ns, values)
		peerRSS[i] = run.maxRSS
		return err
	})
	peerFallbacks := fallbacks() - before
	var peerSum, peerMax float64
	failed := 0
	for i, err := range peerFailed {
		if err != nil {
			b.Errorf("peer process %d: %v", i, err)
			failed++
		}
		peerSum += peerRSS[i]
		peerMax = max(peerMax, peerRSS[i])
	}
	for _, err := range oursFailed {
		if err != nil {
			failed++
		}
	}

	summary := fmt.Sprintf("%d creates at once: ours %s (sidecar RSS %.0f MiB before, peak %.0f MiB), peer %s (%d processes, peak RSS sum %.0f MiB, largest %.0f MiB); "+
		"wall ours/peer %.2f, memory peer/ours %.1f; load %s; ours' clusters CREATE_COMPLETE %s after their burst, before the peer's; "+
		"Secrets LISTs the API server read from etcd, not its watch cache: %d in ours, %d in the peer's",
		n, oursWall.Round(time.Millisecond), rssBefore, peak.rss["sidecar"], peerWall.Round(time.Millisecond), n, peerSum, peerMax,
		oursWall.Seconds()/peerWall.Seconds(), peerSum/peak.rss["sidecar"], peak.load, settled.Round(time.Second), oursFallbacks, peerFallbacks)
	if failed > 0 {
		// A wall time that ends in failures is not a time to deploy:
		// report no ratio (before settle, the API server timed out a
		// whole peer burst's first LISTs at its 60 s request timeout).
		summary = fmt.Sprintf("%d of %d creates failed, no ratio: %s", failed, 2*n, summary)
	}
	b.Log(summary)
	progress("%s", summary)
	if failed == 0 {
		b.ReportMetric(oursWall.Seconds()/peerWall.Seconds(), "wall-ours/peer")
		b.ReportMetric(peerSum/peak.rss["sidecar"], "memory-peer/ours")
	}
	b.ReportMetric(0, "ns/op")

	deleteAll(b, p.Driver, clusters, 15*time.Minute)
	burst(len(names), func(i int) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := peerUninstall(ctx, b, w, names[i], ns); err != nil {
			b.Error(err)
		}
		return nil
	})
}

// burst runs f(0..n-1) at once, released together, and returns the wall
// time until all returned and their errors.
func burst(n int, f func(i int) error) (time.Duration, []error) {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	return time.Since(began), errs
}
