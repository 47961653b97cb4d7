package bench

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// settle waits until every created cluster is CREATE_COMPLETE, as Magnum's
// periodic status job sees it, and returns how long that took. A burst
// measured right after another one would otherwise start while the Cluster
// API controllers still provision the earlier burst's clusters: the API
// server's watch cache of Secrets then lags its etcd by more than the 3 s a
// consistent LIST waits for it, every such LIST falls back to reading the
// whole namespace's Secrets from etcd, and 50 of those at once held the API
// server's etcd connection past its 60 s request timeout (every
// peer process failed that way). Each burst starts on a settled stack
// instead.
func settle(b *testing.B, driver pb.DriverServiceClient, clusters []*cluster, timeout time.Duration) time.Duration {
	b.Helper()
	start := time.Now()
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		if c.Spec.Cluster.StackId == "" {
			continue // its create failed, and the benchmark says so
		}
		wg.Go(func() { errs[i] = c.waitFor(driver, "CREATE_COMPLETE", timeout) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Errorf("settling before the next burst: %v", err)
		}
	}
	return time.Since(start)
}

// secretListFallbacks is how many consistent LISTs of Secrets the API
// server could not serve from its watch cache and read from etcd instead
// (apiserver_watch_cache_consistent_read_total, fallback="true"), since it
// started.
func secretListFallbacks(ctx context.Context, cfg *rest.Config) (int, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	total := 0
	for _, m := range families["apiserver_watch_cache_consistent_read_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["fallback"] == "true" && labels["resource"] == "secrets" {
			total += int(m.GetCounter().GetValue())
		}
	}
	return total, nil
}
