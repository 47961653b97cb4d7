package e2e

import (
	"io"
	"net/http"
	"strings"
	"sync"
)

// faultInjector makes one of a sidecar's requests to the management
// cluster's API server fail (500, as an overloaded API server answers) or
// hang, once: the real API server behind it answers everything else.
type faultInjector struct {
	mu    sync.Mutex
	armed *fault
}

// fault is one request to fail or hang.
type fault struct {
	method string // the request's method
	path   string // a substring of its path, "?" and its query (empty or not)
	// hang holds the request until its context ends (the operation's
	// deadline) or release is closed (for Helm, whose writes nobody
	// cancels), then lets it through; without hang it fails.
	hang     bool
	release  chan struct{}
	released sync.Once
	fired    chan struct{} // closed when the request came
}

// let lets a hung request through.
func (f *fault) let() { f.released.Do(func() { close(f.release) }) }

func newFault(method, path string, hang bool) *fault {
	return &fault{method: method, path: path, hang: hang, release: make(chan struct{}), fired: make(chan struct{})}
}

func (fi *faultInjector) arm(f *fault) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.armed = f
}

// take is the armed fault if req is its request, disarming it.
func (fi *faultInjector) take(req *http.Request) *fault {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	f := fi.armed
	if f == nil || req.Method != f.method || !strings.Contains(req.URL.Path+"?"+req.URL.RawQuery, f.path) {
		return nil
	}
	fi.armed = nil
	close(f.fired)
	return f
}

func (fi *faultInjector) wrap(next http.RoundTripper) http.RoundTripper {
	return statusRoundTripper(func(req *http.Request) (*http.Response, error) {
		f := fi.take(req)
		switch {
		case f == nil:
		case !f.hang:
			return &http.Response{
				StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error", Request: req,
				Header: http.Header{"Content-Type": []string{"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure",` +
					`"message":"injected failure","reason":"InternalError","code":500}`)),
			}, nil
		default:
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-f.release:
			}
		}
		return next.RoundTrip(req)
	})
}
