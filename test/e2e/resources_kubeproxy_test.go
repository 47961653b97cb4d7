package e2e

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeProxy stands between a sidecar and a management cluster's API
// server, so a test can stop the sidecar at an exact point: once armed, the
// first request its trap matches is held (never forwarded) and the test is
// told; it can then kill the sidecar knowing exactly what was written.
type kubeProxy struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	trap    func(*http.Request) bool
	trapped chan *http.Request
	release chan struct{}
}

// startKubeProxy forwards to the API server of cfg with cfg's credentials;
// clients reach it over plain HTTP on 127.0.0.1 without credentials.
func startKubeProxy(t *testing.T, cfg *rest.Config) *kubeProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &kubeProxy{release: make(chan struct{})}
	forward := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     transport,
		FlushInterval: -1, // watches stream
		ErrorLog:      nil,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.url = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.catch(r) {
			select {
			case <-p.release:
			case <-r.Context().Done():
			}
			http.Error(w, "held by the test's kube proxy", http.StatusServiceUnavailable)
			return
		}
		forward.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() {
		p.releaseAll()
		_ = p.srv.Close()
	})
	return p
}

// releaseAll answers every held request (503) and forwards all from now on.
func (p *kubeProxy) releaseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.release:
	default:
		close(p.release)
	}
	p.trap = nil
}

// arm makes the next request trap matches the one that is held; Trapped
// receives it.
func (p *kubeProxy) arm(trap func(*http.Request) bool) <-chan *http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trap = trap
	p.trapped = make(chan *http.Request, 1)
	return p.trapped
}

// catch says whether r is held: it matched the armed trap, or a request
// was held already (nothing passes after the stop point).
func (p *kubeProxy) catch(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trap == nil {
		return false
	}
	if p.trapped == nil {
		return true
	}
	if !p.trap(r) {
		return false
	}
	p.trapped <- r
	p.trapped = nil
	return true
}

// kubeconfig writes a kubeconfig file that reaches the API server through
// the proxy.
func (p *kubeProxy) kubeconfig(t *testing.T, name string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.url}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	path := filepath.Join(stack.Info.Dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
