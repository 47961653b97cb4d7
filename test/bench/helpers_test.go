package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestLeaseWaits: a Lease is waited for when, before the operation's create
// of it succeeds, the sidecar read it held or its create conflicted;
// renewals after the acquisition are not waits.
func TestLeaseWaits(t *testing.T) {
	const path = "/apis/coordination.k8s.io/v1/namespaces/magnum-p/leases"
	get := func(name string, code int) request {
		return request{method: http.MethodGet, path: path + "/" + name, code: code}
	}
	post := func(name string, code int) request {
		return request{method: http.MethodPost, path: path, name: name, code: code}
	}
	for _, tt := range []struct {
		name       string
		reqs       []request
		wantWaited []string
		wantTaken  int
	}{
		{"free at once, then renewed", []request{
			get("magnum-capi-a", 404), post("magnum-capi-a", 201), get("magnum-capi-a", 200),
			{method: http.MethodPut, path: path + "/magnum-capi-a", code: 200},
		}, nil, 1},
		{"held by another holder first", []request{
			get("magnum-capi-b", 200), get("magnum-capi-b", 404), post("magnum-capi-b", 201),
		}, []string{"magnum-capi-b"}, 1},
		{"lost the create race", []request{
			get("magnum-capi-c", 404), post("magnum-capi-c", 409), get("magnum-capi-c", 404), post("magnum-capi-c", 201),
		}, []string{"magnum-capi-c"}, 1},
		{"other Leases and objects are ignored", []request{
			get("kube-scheduler", 200), {method: http.MethodGet, path: "/api/v1/namespaces/magnum-p/secrets/x", code: 200},
			get("magnum-capi-d", 404), post("magnum-capi-d", 201),
		}, nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			waited, taken := leaseWaits(tt.reqs)
			if !slices.Equal(waited, tt.wantWaited) || taken != tt.wantTaken {
				t.Errorf("leaseWaits = %v, %d; want %v, %d", waited, taken, tt.wantWaited, tt.wantTaken)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tt := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 50, 3 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 100, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
	} {
		if got := percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
		}
	}
}

// TestHistogramShare: the share of calls within a bound, and the smallest
// bound holding a quantile, between two readings of a cumulative histogram.
func TestHistogramShare(t *testing.T) {
	inf := math.Inf(1)
	before := map[float64]float64{0.00025: 10, 0.0005: 20, 0.001: 30, 0.005: 30, inf: 30}
	after := map[float64]float64{0.00025: 60, 0.0005: 180, 0.001: 227, 0.005: 229, inf: 230}
	// 200 calls: 50 within 0.25 ms, 160 within 0.5 ms, 197 within 1 ms, 199 within 5 ms.
	for _, tt := range []struct {
		bound, p, wantWithin, wantBound float64
	}{
		{0.001, 0.99, 197.0 / 200, 0.005},
		{0.0005, 0.5, 160.0 / 200, 0.0005},
		{0.001, 0.98, 197.0 / 200, 0.001},
		{0.001, 1, 197.0 / 200, inf},
	} {
		within, bound := histogramShare(before, after, tt.bound, tt.p)
		if within != tt.wantWithin || bound != tt.wantBound {
			t.Errorf("histogramShare(%v, %v) = %v, %v; want %v, %v", tt.bound, tt.p, within, bound, tt.wantWithin, tt.wantBound)
		}
	}
	if w, b := histogramShare(after, after, 0.001, 0.99); w != 0 || b != 0 {
		t.Errorf("no calls: %v, %v; want 0, 0", w, b)
	}
}

// TestPostedName: a POSTed object's name is read from JSON and from
// protobuf (what controller-runtime sends for Leases), and the body is put
// back for the transport.
func TestPostedName(t *testing.T) {
	lease := &coordinationv1.Lease{TypeMeta: metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}}
	lease.Name = "magnum-capi-demo"
	var pbuf, jbuf bytes.Buffer
	if err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(lease, &pbuf); err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(&jbuf).Encode(lease); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		body []byte
		want string
	}{{"protobuf", pbuf.Bytes(), "magnum-capi-demo"}, {"json", jbuf.Bytes(), "magnum-capi-demo"}, {"garbage", []byte("{"), ""}} {
		req, _ := http.NewRequest(http.MethodPost, "http://x/apis/coordination.k8s.io/v1/namespaces/n/leases", bytes.NewReader(tt.body))
		if got := postedName(req); got != tt.want {
			t.Errorf("%s: postedName = %q, want %q", tt.name, got, tt.want)
		}
		if rest, _ := io.ReadAll(req.Body); !bytes.Equal(rest, tt.body) {
			t.Errorf("%s: the body was not put back", tt.name)
		}
	}
}

// TestBenchConfig: the benchmarks' sidecars log at info and give
// OpenStack calls 3 minutes, and the configuration stays valid.
func TestBenchConfig(t *testing.T) {
	c := (&harness.Harness{}).SidecarConfig("/tmp/s.sock")
	benchConfig(&c)
	if c.Log.Level != "info" || c.OpenStack.Timeout != 3*time.Minute {
		t.Errorf("log.level %q, openstack.timeout %s; want info and 3m", c.Log.Level, c.OpenStack.Timeout)
	}
	if len(c.ManagementClusters) == 0 {
		t.Fatal("the stack's sidecar configuration has no management cluster")
	}
	for _, mc := range c.ManagementClusters {
		if mc.QPS != benchQPS || mc.Burst != benchBurst || mc.RequestTimeout != benchRequestTimeout {
			t.Errorf("management cluster %s: qps %v, burst %d, requestTimeout %s; want %v, %d, %s",
				mc.Name, mc.QPS, mc.Burst, mc.RequestTimeout, benchQPS, benchBurst, benchRequestTimeout)
		}
	}
}

// TestParseStatusHistogram: the buckets of successful GetClusterStatus
// calls, by bound, from the sidecar's /metrics.
func TestParseStatusHistogram(t *testing.T) {
	raw := []byte(`# TYPE magnum_capi_rpc_duration_seconds histogram
magnum_capi_rpc_duration_seconds_bucket{code="OK",method="/magnumcapi.v1.DriverService/GetClusterStatus",le="0.0005"} 7
magnum_capi_rpc_duration_seconds_bucket{code="OK",method="/magnumcapi.v1.DriverService/GetClusterStatus",le="+Inf"} 9
magnum_capi_rpc_duration_seconds_bucket{code="Unavailable",method="/magnumcapi.v1.DriverService/GetClusterStatus",le="0.0005"} 100
magnum_capi_rpc_duration_seconds_bucket{code="OK",method="/magnumcapi.v1.DriverService/CreateCluster",le="0.0005"} 100
magnum_capi_rpc_duration_seconds_sum{code="OK",method="/magnumcapi.v1.DriverService/GetClusterStatus"} 0.01
`)
	got, err := parseStatusHistogram(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[float64]float64{0.0005: 7, math.Inf(1): 9}; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseStatusHistogram([]byte("go_goroutines 5\n")); err == nil {
		t.Error("no GetClusterStatus series: want an error")
	}
}

// TestParseHelmSeconds: the seconds and count of successful Helm
// operations, by operation, from the sidecar's /metrics.
func TestParseHelmSeconds(t *testing.T) {
	raw := []byte(`# TYPE magnum_capi_helm_operation_duration_seconds histogram
magnum_capi_helm_operation_duration_seconds_bucket{operation="install",outcome="success",le="1"} 2
magnum_capi_helm_operation_duration_seconds_sum{operation="install",outcome="success"} 1.5
magnum_capi_helm_operation_duration_seconds_count{operation="install",outcome="success"} 3
magnum_capi_helm_operation_duration_seconds_sum{operation="install",outcome="error"} 9
magnum_capi_helm_operation_duration_seconds_count{operation="install",outcome="error"} 1
magnum_capi_helm_operation_duration_seconds_sum{operation="upgrade",outcome="success"} 0.25
magnum_capi_helm_operation_duration_seconds_count{operation="upgrade",outcome="success"} 1
magnum_capi_rpc_duration_seconds_sum{method="/x",code="OK"} 7
`)
	got, err := parseHelmSeconds(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"install": {1.5, 3}, "upgrade": {0.25, 1}}
	if len(got) != len(want) || got["install"] != want["install"] || got["upgrade"] != want["upgrade"] {
		t.Errorf("parseHelmSeconds = %v, want %v", got, want)
	}
	if _, err := parseHelmSeconds([]byte("magnum_capi_helm_operation_duration_seconds_sum{operation=\"get\",outcome=\"success\"} x\n")); err == nil {
		t.Error("a value that is not a number was accepted")
	}
}
