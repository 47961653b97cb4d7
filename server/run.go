package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/clusters"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/metrics"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// Run wires the adapters, serves until ctx ends, then drains in-flight
// calls (Magnum's operations are short) before returning.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...RunOption) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	m := metrics.New()

	var mgmt []*clusters.ManagementCluster
	for _, mc := range cfg.ManagementClusters {
		rc, err := kube.LoadRESTConfig(mc.Kubeconfig, mc.Context)
		if err != nil {
			return err
		}
		if o.wrapKube != nil {
			rc.Wrap(o.wrapKube)
		}
		kc, err := kube.Connect(mc.Name, rc)
		if err != nil {
			return err
		}
		cache, err := kc.StartCache(ctx, log)
		if err != nil {
			return err
		}
		m.AddCache(mc.Name, cache)
		mgmt = append(mgmt, &clusters.ManagementCluster{Name: mc.Name, Kube: kc, Cache: cache})
	}
	openStack, err := newOpenStack(cfg.OpenStack, log)
	if err != nil {
		return err
	}
	charts, err := release.NewCharts(release.Source{
		Repository: cfg.Chart.Repository, Name: cfg.Chart.Name, CAFile: cfg.Chart.CAFile,
		Username: cfg.Chart.Username, Password: cfg.Chart.Password, PlainHTTP: cfg.Chart.PlainHTTP,
	}, release.CacheOptions{Dir: cfg.Chart.CacheDir, IndexTTL: cfg.Chart.IndexTTL}, log)
	if err != nil {
		return err
	}
	// Fetch the default chart version now, so clusters can be created and
	// updated with it even if the repository is down later.
	go func() {
		if err := charts.Warm(ctx, cfg.Chart.Version); err != nil {
			log.Warn("could not cache the default chart version", "version", cfg.Chart.Version, "err", err)
		}
	}()
	hostname, _ := os.Hostname()
	valuesCfg := helmvalues.DefaultConfig()
	valuesCfg.DefaultChartVersion = cfg.Chart.Version
	valuesCfg.StrictLabels = cfg.Values.StrictLabels
	svc, err := clusters.New(clusters.Config{
		NamespacePrefix: cfg.NamespacePrefix,
		Holder:          fmt.Sprintf("%s-%d-%d", hostname, os.Getpid(), time.Now().UnixNano()%1e6),
		LockTTL:         cfg.Timeouts.Lock,
		Values:          valuesCfg,
		Status: capistatus.Config{
			UpdateTimeout: cfg.Timeouts.Update, DeleteTimeout: cfg.Timeouts.Delete,
			DefaultCreateTimeout: cfg.Timeouts.DefaultCreate, AddonFailureGrace: cfg.Timeouts.AddonFailureGrace,
		},
	}, clusters.Deps{
		ManagementClusters: mgmt,
		Default:            cfg.DefaultManagementCluster,
		Releases:           release.NewManager(release.Options{HistoryMax: cfg.Helm.HistoryMax, Timeout: cfg.Helm.Timeout, Observe: m.ObserveHelm}, log),
		Charts:             charts,
		OpenStack:          openStack,
		Log:                log,
	})
	if err != nil {
		return err
	}

	tlsConfig, err := serverTLS(cfg.TLS)
	if err != nil {
		return err
	}
	grpcServer, health := New(NewService(svc), Options{
		Log: log, TLS: tlsConfig, ObserveTransition: m.ObserveTransition,
		Observe: func(method string, code codes.Code, elapsed time.Duration) {
			m.ObserveRPC(method, code.String(), elapsed)
		},
	})
	lis, err := Listen(cfg.Listen, cfg.SocketGroup)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Listen, err)
	}
	var ready atomic.Bool
	metricsDone := make(<-chan error)
	if cfg.MetricsAddress != "" {
		if metricsDone, err = metrics.Serve(ctx, cfg.MetricsAddress, m.Handler(ready.Load, cfg.Pprof), log); err != nil {
			lis.Close()
			return err
		}
	}
	go func() {
		// Serving once every watch cache has synced: before that, status
		// answers would be stale, so health says NOT_SERVING.
		for _, mc := range mgmt {
			if err := mc.Cache.WaitForSync(ctx); err != nil {
				return
			}
		}
		SetServing(health, true)
		ready.Store(true)
		log.Info("serving", "listen", cfg.Listen, "management_clusters", len(mgmt))
	}()
	errc := make(chan error, 1)
	go func() { errc <- grpcServer.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case err := <-metricsDone:
		if ctx.Err() == nil { // not our own shutdown
			grpcServer.Stop()
			return fmt.Errorf("metrics server on %s stopped: %v", cfg.MetricsAddress, err)
		}
	case <-ctx.Done():
	}
	SetServing(health, false)
	ready.Store(false)
	stopped := make(chan struct{})
	go func() { grpcServer.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(60 * time.Second):
		grpcServer.Stop()
	}
	if path, ok := strings.CutPrefix(cfg.Listen, "unix://"); ok {
		_ = os.Remove(path)
	}
	return nil
}

// serverTLS requires and verifies client certificates: a TCP listener is
// reachable by anything on the network, unlike the unix socket.
func serverTLS(c config.TLS) (*tls.Config, error) {
	if c.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.certFile/tls.keyFile: %w", err)
	}
	caPEM, err := os.ReadFile(c.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("tls.clientCAFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("tls.clientCAFile: no PEM certificate found")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}, nil
}

func newOpenStack(c config.OpenStack, log *slog.Logger) (clusters.OpenStack, error) {
	return openstack.New(openstack.Config{
		CloudsFile: c.CloudsFile, Cloud: c.Cloud, AuthURL: c.AuthURL, Region: c.Region,
		Interface: c.Interface, CAFile: c.CAFile, Timeout: c.Timeout,
	}, log)
}
