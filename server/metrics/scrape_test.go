package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// staticCache stands in for a watch cache in this unit test only; the
// end-to-end tests scrape the real one.
type staticCache struct {
	synced bool
	counts map[string]int
	err    error
}

func (c staticCache) Synced() bool                                   { return c.synced }
func (c staticCache) Counts(context.Context) (map[string]int, error) { return c.counts, c.err }

// Scrape fetches /metrics from h and parses it.
func Scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics: %s %s", resp.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// series renders a family's samples as "label=value,... value" lines (labels
// in the exposition's alphabetical order), sorted.
func series(f *dto.MetricFamily) []string {
	var out []string
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		var v float64
		switch {
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		out = append(out, fmt.Sprintf("%s %g", strings.Join(labels, ","), v))
	}
	sort.Strings(out)
	return out
}

func TestScrape(t *testing.T) {
	m := New()
	m.ObserveRPC("/magnumcapi.v1.DriverService/CreateCluster", "OK", 300*time.Millisecond)
	m.ObserveRPC("/magnumcapi.v1.DriverService/CreateCluster", "InvalidArgument", time.Millisecond)
	m.ObserveRPC("/magnumcapi.v1.DriverService/GetClusterStatus", "OK", 2*time.Millisecond)
	m.ObserveRPC("/magnumcapi.v1.DriverService/GetClusterStatus", "OK", 3*time.Millisecond)
	m.ObserveHelm("install", 2*time.Second, nil)
	m.ObserveHelm("upgrade", time.Second, errors.New("conflict"))
	m.ObserveTransition("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
	m.ObserveTransition("CREATE_COMPLETE", "CREATE_COMPLETE")   // no change: not counted
	m.ObserveTransition("made-up status", "DELETE_IN_PROGRESS") // bounded label
	m.ObserveArgoCD("apply", nil)
	m.ObserveArgoCD("apply", errors.New("argo cd namespace missing"))
	m.ObserveArgoCD("delete", nil)
	m.AddCache("east", staticCache{synced: true, counts: map[string]int{"Cluster": 2, "Machine": 7}})
	m.AddCache("west", staticCache{synced: false})
	m.AddCache("north", staticCache{synced: true, err: errors.New("boom")})

	families := Scrape(t, m.Handler(nil, false))
	tests := []struct {
		family string
		want   []string
	}{
		{"magnum_capi_rpc_duration_seconds", []string{
			"code=InvalidArgument,method=/magnumcapi.v1.DriverService/CreateCluster 1",
			"code=OK,method=/magnumcapi.v1.DriverService/CreateCluster 1",
			"code=OK,method=/magnumcapi.v1.DriverService/GetClusterStatus 2",
		}},
		{"magnum_capi_rpc_errors_total", []string{"code=InvalidArgument,method=/magnumcapi.v1.DriverService/CreateCluster 1"}},
		{"magnum_capi_helm_operation_duration_seconds", []string{"operation=install,outcome=success 1", "operation=upgrade,outcome=error 1"}},
		{"magnum_capi_cluster_status_transitions_total", []string{"from=CREATE_IN_PROGRESS,to=CREATE_COMPLETE 1", "from=other,to=DELETE_IN_PROGRESS 1"}},
		{"magnum_capi_argocd_secret_writes_total", []string{"action=apply,outcome=error 1", "action=apply,outcome=success 1", "action=delete,outcome=success 1"}},
		{"magnum_capi_watch_cache_synced", []string{"management_cluster=east 1", "management_cluster=north 1", "management_cluster=west 0"}},
		{"magnum_capi_watch_cache_objects", []string{"kind=Cluster,management_cluster=east 2", "kind=Machine,management_cluster=east 7"}},
		{"magnum_capi_watch_cache_count_errors", []string{"management_cluster=east 0", "management_cluster=north 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			got := series(families[tt.family])
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
	if families["go_goroutines"] == nil || families["process_start_time_seconds"] == nil {
		t.Error("the Go runtime and process collectors are missing")
	}
}

func TestHealthz(t *testing.T) {
	ready := false
	srv := httptest.NewServer(New().Handler(func() bool { return ready }, false))
	defer srv.Close()
	for _, tt := range []struct {
		ready bool
		want  int
	}{{false, http.StatusServiceUnavailable}, {true, http.StatusOK}} {
		ready = tt.ready
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("ready=%v: /healthz = %d, want %d", tt.ready, resp.StatusCode, tt.want)
		}
	}
}

// TestProfiles: Go's profiles are served only when asked for (config pprof).
func TestProfiles(t *testing.T) {
	for _, profiles := range []bool{false, true} {
		srv := httptest.NewServer(New().Handler(nil, profiles))
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1"} {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := http.StatusNotFound
			if profiles {
				want = http.StatusOK
			}
			if resp.StatusCode != want {
				t.Errorf("profiles=%v: GET %s = %d, want %d", profiles, path, resp.StatusCode, want)
			}
			if profiles && len(body) == 0 {
				t.Errorf("GET %s: empty profile", path)
			}
		}
		srv.Close()
	}
}

func TestServeRefusesBusyAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := Serve(ctx, "127.0.0.1:0", New().Handler(nil, false), discard())
	if err != nil {
		t.Fatal(err)
	}
	_ = first
	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	addr := strings.TrimPrefix(busy.URL, "http://")
	if _, err := Serve(ctx, addr, New().Handler(nil, false), discard()); err == nil || !strings.Contains(err.Error(), "metricsAddress "+addr) {
		t.Errorf("Serve on a busy port: %v, want an error naming metricsAddress %s", err, addr)
	}
}
