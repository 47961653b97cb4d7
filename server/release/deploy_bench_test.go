package release

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// BenchmarkDeploy: the chart's install and an upgrade that changes one
// node group's count through Manager.Deploy, on one test bed, each in a
// namespace of its own per round. Reports medians, CPU and requests per
// operation (docs/benchmarks.md).
// MAGNUM_CAPI_BENCH_ROUNDS sets the rounds (default 7).
func BenchmarkDeploy(b *testing.B) {
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	env, err := testbed.Start(b.Context(), testbed.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Stop()
	var requests atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // not throttled by the client
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) { requests.Add(1); return next.RoundTrip(r) })
	})
	kc, err := kube.Connect("bench", cfg)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := testchart.Load()
	if err != nil {
		b.Fatal(err)
	}
	values := baseValues(b)
	m := NewManager(Options{HistoryMax: 10}, quiet())
	rounds := 7
	if n, err := fmt.Sscan(os.Getenv("MAGNUM_CAPI_BENCH_ROUNDS"), &rounds); n != 1 || err != nil {
		rounds = 7
	}
	type sample struct {
		took, cpu time.Duration
		requests  int64
	}
	results := map[string][]sample{}
	for round := range rounds {
		ns := fmt.Sprintf("bench-%d", round)
		if err := kc.EnsureNamespace(b.Context(), ns, nil); err != nil {
			b.Fatal(err)
		}
		t := Target{Getter: kc.HelmGetter(ns), Namespace: ns, Labels: map[string]string{"magnum.openstack.org/cluster-uuid": ns}}
		for _, op := range []string{"install", "upgrade"} {
			v := values
			if op == "upgrade" {
				v = withWorkers(values, 3)
			}
			requests.Store(0)
			start, cpu := time.Now(), processCPU()
			if _, err := m.Deploy(b.Context(), t, "bench", ch, v); err != nil {
				b.Fatalf("%s: %v", op, err)
			}
			results[op] = append(results[op], sample{time.Since(start), processCPU() - cpu, requests.Load()})
		}
	}
	for _, op := range []string{"install", "upgrade"} {
		s := results[op]
		took, cpu := make([]time.Duration, len(s)), make([]time.Duration, len(s))
		for j := range s {
			took[j], cpu[j] = s[j].took, s[j].cpu
		}
		slices.Sort(took)
		slices.Sort(cpu)
		med := took[len(took)/2]
		b.Logf("%s: median %s of %d (min %s, max %s), CPU median %s, %d requests", op, med.Round(time.Millisecond), len(took),
			took[0].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), cpu[len(cpu)/2].Round(time.Millisecond), s[len(s)-1].requests)
		b.ReportMetric(float64(med.Milliseconds()), op+"-ms")
	}
}

// baseValues are the chart's base values the tests deploy.
func baseValues(tb testing.TB) map[string]any {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(testbed.TestdataDir(), "chart-0.27.0", "values-base.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		tb.Fatal(err)
	}
	return values
}

// withWorkers is values with every node group's count set to n.
func withWorkers(values map[string]any, n int) map[string]any {
	raw, _ := yaml.Marshal(values)
	var out map[string]any
	_ = yaml.Unmarshal(raw, &out)
	groups, _ := out["nodeGroups"].([]any)
	for _, g := range groups {
		if gm, ok := g.(map[string]any); ok {
			gm["machineCount"] = n
		}
	}
	return out
}

// processCPU is the CPU time this process has used (user and system): the
// client's side of a deploy, plus the test bed's conversion webhook, which
// runs in this process for both ways alike.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
