package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Handler serves /metrics and /healthz. /healthz answers 200 once ready
// reports true (the sidecar can answer Magnum), 503 before: a probe that
// cannot speak gRPC (systemd, a load balancer) can still tell. With
// profiles, it also serves Go's /debug/pprof/ (the config option pprof).
func (m *Metrics) Handler(ready func() bool, profiles bool) http.Handler {
	mux := http.NewServeMux()
	if profiles {
		// Registered by hand: importing net/http/pprof registers on
		// http.DefaultServeMux, which this server does not serve.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			http.Error(w, "not ready: watch caches syncing", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// Serve listens on address (host:port) and serves h until ctx ends. The
// listener is opened before Serve returns, so a port in use fails the start
// rather than a later scrape.
func Serve(ctx context.Context, address string, h http.Handler, log *slog.Logger) (<-chan error, error) {
	lis, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("metricsAddress %s: %w", address, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() {
		// net/http recovers its handlers' panics itself; this is for its loop.
		err := panics.Run(ctx, log, "metrics/serve", func() error { return srv.Serve(lis) })
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		defer panics.Recover(ctx, log, "metrics/shutdown", nil)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("serving metrics", "address", lis.Addr().String())
	return done, nil
}
