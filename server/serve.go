package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/magnum-capi/magnum-capi/server/clusters"
	"github.com/magnum-capi/magnum-capi/server/metrics"
	"github.com/magnum-capi/magnum-capi/server/panics"
)

// drainTimeout bounds the wait for in-flight calls at shutdown: Magnum's
// operations answer within its 60 s RPC timeout.
const drainTimeout = 60 * time.Second

// Serve runs the sidecar until ctx ends: it starts the watch caches, warms
// the default chart version, serves metrics (when configured) and gRPC,
// and reports SERVING once every cache has synced. When ctx ends it drains
// in-flight calls before returning. A sidecar is served once.
func (s *Sidecar) Serve(ctx context.Context) error {
	if s.served.Swap(true) {
		return errors.New("the sidecar was served or closed already")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.removeSocket()
	for _, c := range s.caches {
		c.Start(ctx)
	}
	// Fetch the default chart version now, so clusters can be created and
	// updated with it even if the repository is down later.
	go func() {
		if err := panics.Run(ctx, s.log, "serve/warmChart", func() error { return s.charts.Warm(ctx, s.cfg.Chart.Version) }); err != nil {
			s.log.Warn("could not cache the default chart version", "version", s.cfg.Chart.Version, "err", err)
		}
	}()
	metricsDone := make(<-chan error)
	if s.cfg.MetricsAddress != "" {
		var err error
		if metricsDone, err = metrics.Serve(ctx, s.cfg.MetricsAddress, s.metrics.Handler(s.ready.Load, s.cfg.Pprof), s.log); err != nil {
			s.lis.Close()
			return err
		}
	}
	go func() {
		_ = panics.Run(ctx, s.log, "serve/announce", func() error { s.announceWhenSynced(ctx); return nil })
	}()
	go s.domain.WatchCredentials(ctx, clusters.CredentialWatchInterval, s.reportCredentials)
	s.domain.RunReconcilers(ctx)
	// grpc.Serve, GracefulStop and the metrics server are gRPC's and
	// net/http's own loops; every call they hand us is recovered in
	// unaryInterceptor (gRPC) or by net/http itself.
	errc := make(chan error, 1)
	go func() { errc <- s.grpc.Serve(s.lis) }()
	select {
	case err := <-errc:
		return err
	case err := <-metricsDone:
		if ctx.Err() == nil { // not our own shutdown
			s.grpc.Stop()
			return fmt.Errorf("metrics server on %s stopped: %v", s.cfg.MetricsAddress, err)
		}
	case <-ctx.Done():
	}
	s.drain()
	return nil
}

// announceWhenSynced reports SERVING once every watch cache has synced:
// before that, status answers would be stale, so health says NOT_SERVING.
func (s *Sidecar) announceWhenSynced(ctx context.Context) {
	for _, c := range s.caches {
		if err := c.WaitForSync(ctx); err != nil {
			return
		}
	}
	setServing(s.health, true)
	s.ready.Store(true)
	s.log.Info("serving", "listen", s.cfg.Listen, "management_clusters", len(s.caches))
}

// drain stops taking calls and waits for in-flight ones, up to
// drainTimeout.
func (s *Sidecar) drain() {
	setServing(s.health, false)
	s.ready.Store(false)
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(drainTimeout):
		s.grpc.Stop()
	}
}

// reportCredentials hands the credential watch's findings to the metrics.
func (s *Sidecar) reportCredentials(due []clusters.ExpiringCredential) {
	out := make([]metrics.CredentialExpiry, len(due))
	for i, d := range due {
		out[i] = metrics.CredentialExpiry{ManagementCluster: d.ManagementCluster, Namespace: d.Namespace, StackID: d.StackID, ExpiresAt: d.ExpiresAt}
	}
	s.metrics.SetExpiringCredentials(out)
}
