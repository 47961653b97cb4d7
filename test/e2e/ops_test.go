package e2e

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// scrape fetches and parses a sidecar's /metrics, as Prometheus would.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

// sample finds the sample of family whose labels include every pair of want.
func sample(families map[string]*dto.MetricFamily, family string, want map[string]string) *dto.Metric {
	f := families[family]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// checkLifecycleMetrics reads the metrics of a sidecar that took a cluster
// through create, resize, upgrade and delete, and refused one empty request.
func checkLifecycleMetrics(t *testing.T, sc *harness.Sidecar) {
	families := scrape(t, sc.MetricsURL)
	const svc = "/magnumcapi.v1.DriverService/"
	for _, method := range []string{"CreateCluster", "ResizeCluster", "UpgradeCluster", "DeleteCluster", "GetClusterStatus"} {
		m := sample(families, "magnum_capi_rpc_duration_seconds", map[string]string{"method": svc + method, "code": "OK"})
		if m == nil || m.GetHistogram().GetSampleCount() == 0 {
			t.Errorf("no OK %s in magnum_capi_rpc_duration_seconds", method)
		}
	}
	if m := sample(families, "magnum_capi_rpc_errors_total", map[string]string{"method": svc + "CreateCluster", "code": "InvalidArgument"}); m.GetCounter().GetValue() < 1 {
		t.Error("the refused CreateCluster is not in magnum_capi_rpc_errors_total")
	}
	for _, op := range []string{"install", "upgrade", "uninstall"} {
		m := sample(families, "magnum_capi_helm_operation_duration_seconds", map[string]string{"operation": op, "outcome": "success"})
		if m == nil || m.GetHistogram().GetSampleCount() == 0 {
			t.Errorf("no successful Helm %s in magnum_capi_helm_operation_duration_seconds", op)
		}
	}
	for _, tr := range []struct {
		from, to string
		want     float64
	}{{"CREATE_IN_PROGRESS", "CREATE_COMPLETE", 1}, {"UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", 2}, {"DELETE_IN_PROGRESS", "DELETE_COMPLETE", 1}} {
		if m := sample(families, "magnum_capi_cluster_status_transitions_total", map[string]string{"from": tr.from, "to": tr.to}); m.GetCounter().GetValue() != tr.want {
			t.Errorf("magnum_capi_cluster_status_transitions_total{from=%s,to=%s} = %v, want %v (resize and upgrade are updates)", tr.from, tr.to, m.GetCounter().GetValue(), tr.want)
		}
	}
	if m := sample(families, "magnum_capi_watch_cache_synced", map[string]string{"management_cluster": "default"}); m.GetGauge().GetValue() != 1 {
		t.Error("magnum_capi_watch_cache_synced{management_cluster=default} is not 1")
	}
	// The test bed holds other tests' clusters too: only that every kind is
	// counted can be asserted exactly.
	var kinds []string
	for _, m := range families["magnum_capi_watch_cache_objects"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "kind" {
				kinds = append(kinds, l.GetValue())
			}
		}
	}
	if got := strings.Join(kinds, ","); !strings.Contains(got, "Cluster") || !strings.Contains(got, "Machine") || !strings.Contains(got, "HelmReleaseSecret") {
		t.Errorf("magnum_capi_watch_cache_objects kinds = %s", got)
	}
	resp, err := http.Get(strings.TrimSuffix(sc.MetricsURL, "/metrics") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz of a serving sidecar: %s", resp.Status)
	}
}
