package chartrepo

import (
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"helm.sh/helm/v3/pkg/repo"
)

// HTTPOptions configure a classic chart repository.
type HTTPOptions struct {
	// Charts are published when the repository starts.
	Charts []Chart
	// TLS serves HTTPS with a certificate from a CA made for this repository
	// (see CAPEM and CAFile).
	TLS bool
	// Username and Password, when Username is set, are required on every
	// request (HTTP basic auth).
	Username, Password string
}

// HTTP is a classic Helm chart repository (index.yaml and .tgz files) on
// 127.0.0.1, as served by e.g. ChartMuseum or GitHub Pages.
type HTTP struct {
	srv    *server
	dir    string
	url    string
	caPEM  []byte
	caFile string

	mu sync.Mutex // serialises publishing
}

// StartHTTP packages opts.Charts and serves them. Close it when done.
func StartHTTP(opts HTTPOptions) (_ *HTTP, err error) {
	dir, err := os.MkdirTemp("", "chartrepo-http-")
	if err != nil {
		return nil, err
	}
	r := &HTTP{dir: dir}
	defer func() {
		if err != nil {
			_ = r.Close()
		}
	}()
	chartsDir := filepath.Join(dir, "charts")
	if err := os.Mkdir(chartsDir, 0o755); err != nil {
		return nil, err
	}
	var handler http.Handler = http.FileServer(http.Dir(chartsDir))
	if opts.Username != "" {
		handler = basicAuth(handler, opts.Username, opts.Password)
	}
	scheme := "http"
	var tlsConfig *tls.Config
	if opts.TLS {
		if tlsConfig, r.caPEM, err = newTLS(); err != nil {
			return nil, fmt.Errorf("making TLS certificates: %w", err)
		}
		r.caFile = filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(r.caFile, r.caPEM, 0o600); err != nil {
			return nil, err
		}
		scheme = "https"
	}
	if r.srv, err = startServer(handler, tlsConfig); err != nil {
		return nil, err
	}
	r.url = scheme + "://" + r.srv.addr
	for _, c := range opts.Charts {
		if err := r.Publish(c); err != nil {
			return nil, err
		}
	}
	if len(opts.Charts) == 0 {
		// An empty repository still answers index.yaml.
		if err := r.reindex(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Publish packages c into the repository and rewrites index.yaml.
func (r *HTTP) Publish(c Chart) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, _, _, err := Package(c, filepath.Join(r.dir, "charts")); err != nil {
		return err
	}
	return r.reindex()
}

func (r *HTTP) reindex() error {
	chartsDir := filepath.Join(r.dir, "charts")
	index, err := repo.IndexDirectory(chartsDir, r.url)
	if err != nil {
		return fmt.Errorf("indexing %s: %w", chartsDir, err)
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(chartsDir, "index.yaml"), 0o644); err != nil {
		return fmt.Errorf("writing index.yaml: %w", err)
	}
	return nil
}

// URL is the repository's URL (http://127.0.0.1:PORT or https://...), which
// is also the base of the chart URLs in its index.
func (r *HTTP) URL() string { return r.url }

// CAPEM is the PEM certificate of the CA that signed the repository's
// certificate; nil without TLS.
func (r *HTTP) CAPEM() []byte { return r.caPEM }

// CAFile is a file holding CAPEM, for Helm's --ca-file; "" without TLS.
func (r *HTTP) CAFile() string { return r.caFile }

// SetOnline takes the repository down (nothing listens on its port) or
// brings it back on the same URL.
func (r *HTTP) SetOnline(online bool) error { return r.srv.setOnline(online) }

// Requests is how many requests reached path, e.g. "/index.yaml" or
// "/openstack-cluster-0.27.0.tgz", including refused ones.
func (r *HTTP) Requests(path string) int { return r.srv.requestCount(path) }

// RequestCounts is the request count of every path requested so far.
func (r *HTTP) RequestCounts() map[string]int { return r.srv.requestCounts() }

// Close stops the repository and removes its files.
func (r *HTTP) Close() error {
	var errs []error
	if r.srv != nil {
		errs = append(errs, r.srv.close())
	}
	errs = append(errs, os.RemoveAll(r.dir))
	return errors.Join(errs...)
}

// basicAuth refuses requests without the username and password.
func basicAuth(next http.Handler, username, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="chartrepo"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}
