package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// benchEnv guards the stack: only `make bench` sets it, so `go test ./...`
// and a stray `go test -bench . ./...` never start thousands of clusters.
const benchEnv = "MAGNUM_CAPI_BENCH"

// world is the stack and one in-process sidecar, started by the first
// benchmark that needs them and shared by the rest.
type world struct {
	stack *harness.Harness
	// kube is a client of the management cluster without client-side rate
	// limits (loading thousands of objects).
	kube    client.Client
	driver  pb.DriverServiceClient
	counter *requestLog
	stop    func()
}

var (
	worldOnce sync.Once
	shared    *world
	worldErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	removePeer()
	os.Exit(code)
}

// stackFor returns the shared stack, starting it on first use; a benchmark
// run without MAGNUM_CAPI_BENCH=1 is skipped with how to run it.
func stackFor(b *testing.B) *world {
	b.Helper()
	if os.Getenv(benchEnv) != "1" {
		b.Skipf("the stack benchmarks run from `make bench` (%s=1); plain go test only compiles them", benchEnv)
	}
	worldOnce.Do(func() { shared, worldErr = startWorld() })
	if worldErr != nil {
		b.Fatal(worldErr)
	}
	return shared
}

func startWorld() (_ *world, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	started := time.Now()
	stack, err := harness.Start(ctx, harness.Options{Step: 100 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("starting the test stack: %w", err)
	}
	w := &world{stack: stack, counter: &requestLog{}}
	var stops []func()
	w.stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		_ = stack.Stop()
	}
	defer func() {
		if err != nil {
			w.stop()
		}
	}()
	cfg := rest.CopyConfig(stack.Env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	if w.kube, err = client.New(cfg, client.Options{Scheme: stack.Env.Scheme}); err != nil {
		return nil, err
	}

	sc, err := stack.StartSidecar(ctx, harness.SidecarOptions{Name: "bench", Configure: benchConfig, KubeTransport: w.counter.wrap})
	if err != nil {
		return nil, err
	}
	stops = append(stops, func() {
		_ = sc.Stop()
		keepLog(sc.LogFile)
	})
	w.driver = sc.Driver
	fmt.Fprintf(os.Stderr, "bench: test stack and sidecar up in %s (%s)\n", time.Since(started).Round(time.Second), stack.Info.Dir)
	return w, nil
}

// benchConfig is the benchmarks' change to the stack's sidecar
// configuration: info-level logs (debug logs of thousands of polls would be
// most of what the sidecar does) and OpenStack calls allowed 3 minutes
// instead of 30 s: the test Keystone is one uWSGI worker, so 200 creates at
// once queue their application credentials one behind another for longer
// than 30 s, which a production Keystone's many workers would not.
//
// The management-cluster client's limits are raised as
// docs/operator-guide.md tells a large site to (managementClusters[].qps,
// .burst, .requestTimeout): at the defaults (50/s, burst 100) a burst of
// 200 creates waits on the sidecar's own limiter, and the side-by-side
// with the peer and the floor would measure that limiter.
func benchConfig(c *config.Config) {
	c.Log.Level = "info"
	c.OpenStack.Timeout = 3 * time.Minute
	for i := range c.ManagementClusters {
		mc := &c.ManagementClusters[i]
		mc.QPS, mc.Burst, mc.RequestTimeout = benchQPS, benchBurst, benchRequestTimeout
	}
}

// The benchmarks' management-cluster client limits (benchConfig).
const (
	benchQPS            = 1000
	benchBurst          = 2000
	benchRequestTimeout = 2 * time.Minute
)

// postedName is the metadata.name of the object a POST creates, in JSON or
// in protobuf (controller-runtime sends built-in kinds such as Leases as
// protobuf). The body is read and put back for the transport.
func postedName(req *http.Request) string {
	if req.Body == nil || req.Body == http.NoBody {
		return ""
	}
	raw, err := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetName()
}

// requestLog records the requests a sidecar sends to the API server
// (method, path, response code), at its own client transport.
type requestLog struct {
	mu   sync.Mutex
	seen []request
}

type request struct {
	method, path string
	// watch: a watch the informers (re)established, not a read.
	watch bool
	code  int
	// name is a created object's name (a POST's path has none).
	name string
	at   time.Time
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		r := request{method: req.Method, path: req.URL.Path, watch: req.URL.Query().Get("watch") == "true", at: time.Now()}
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/leases") {
			r.name = postedName(req)
		}
		resp, err := next.RoundTrip(req)
		if resp != nil {
			r.code = resp.StatusCode
		}
		l.mu.Lock()
		l.seen = append(l.seen, r)
		l.mu.Unlock()
		return resp, err
	})
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *requestLog) requests() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]request(nil), l.seen...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// keepLog copies the sidecar's log to $MAGNUM_CAPI_BENCH_LOGS (if set)
// before the stack's directory is removed, to see where a slow run's time
// went.
func keepLog(path string) {
	dir := os.Getenv("MAGNUM_CAPI_BENCH_LOGS")
	if dir == "" {
		return
	}
	raw, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s", time.Now().Unix(), filepath.Base(path))), raw, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: keeping the sidecar log:", err)
	}
}

// progress writes a line to stderr at once (benchmark logs appear only when
// a benchmark ends), so a long run shows where it is.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %s: "+format+"\n", append([]any{time.Now().UTC().Format(time.TimeOnly)}, args...)...)
}
