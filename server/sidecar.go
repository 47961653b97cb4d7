package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/server/clusters"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/metrics"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// Sidecar is an assembled sidecar (as etcd's StartEtcd returns a handle):
// every adapter built from a validated configuration and the gRPC listener
// open, nothing running yet. Serve runs it until its context ends; Close
// releases what New opened, when Serve never ran.
type Sidecar struct {
	cfg     config.Config
	log     *slog.Logger
	metrics *metrics.Metrics
	caches  []*watchcache.Cache
	charts  *release.Charts
	domain  *clusters.Service
	grpc    *grpc.Server
	health  *health.Server
	lis     net.Listener
	// ready is true while every watch cache has synced and the sidecar
	// serves (the metrics server's /healthz).
	ready  atomic.Bool
	served atomic.Bool
}

// New assembles the sidecar from cfg (config.Load validated it): the
// management clusters' clients and watch caches, the chart source, the
// OpenStack adapter, the domain service and the gRPC server on its
// listener. It talks to no repository or Keystone: one that is down at start
// is met later, by the calls that need it (the watch caches do ask each
// management API for its resources). What the configuration or the host
// gets wrong (an unwritable chart cache, a kubeconfig that does not load, a
// socket directory that is missing) is a *config.OptionError naming the
// option, and is found before any management API is asked.
func New(cfg config.Config, log *slog.Logger, opts ...Option) (_ *Sidecar, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// The request rules compile here, once: a defect in proto/'s rules
	// fails the start, and no request waits for the compile.
	if _, err := requestRules(); err != nil {
		return nil, fmt.Errorf("compiling the request rules: %w", err)
	}
	s := &Sidecar{cfg: cfg, log: log, metrics: metrics.New()}
	if err := s.openCharts(); err != nil {
		return nil, err
	}
	tlsConfig, err := serverTLS(cfg.TLS)
	if err != nil {
		return nil, config.Problem("tls", "", err)
	}
	mgmt, err := s.connect(o)
	if err != nil {
		return nil, err
	}
	gitOps, err := s.gitOps(o)
	if err != nil {
		return nil, err
	}
	svc, err := s.newDomain(mgmt, gitOps)
	if err != nil {
		return nil, err
	}
	s.domain = svc
	s.grpc, s.health = newGRPCServer(NewService(svc), grpcOptions{
		Log: log, TLS: tlsConfig, ObserveTransition: s.metrics.ObserveTransition,
		Observe: func(method string, code codes.Code, elapsed time.Duration) {
			s.metrics.ObserveRPC(method, code.String(), elapsed)
		},
	})
	if s.lis, err = Listen(cfg.Listen, cfg.SocketGroup); err != nil {
		return nil, config.Problem("listen", cfg.Listen, err)
	}
	return s, nil
}

// connect builds each management cluster's clients and watch cache.
func (s *Sidecar) connect(o options) ([]*clusters.ManagementCluster, error) {
	var mgmt []*clusters.ManagementCluster
	for i, mc := range s.cfg.ManagementClusters {
		rc, err := kube.LoadRESTConfig(mc.Kubeconfig, mc.Context)
		if err != nil {
			return nil, config.Problem(fmt.Sprintf("managementClusters[%d].kubeconfig", i), mc.Kubeconfig, err)
		}
		rc.QPS, rc.Burst, rc.Timeout = clientLimits(mc)
		if o.wrapKube != nil {
			rc.Wrap(o.wrapKube)
		}
		kc, err := kube.Connect(mc.Name, rc)
		if err != nil {
			return nil, err
		}
		kc.NamespaceRole = cmp.Or(mc.NamespaceClusterRole, config.DefaultNamespaceClusterRole)
		cache, err := watchcache.New(kc, s.log)
		if err != nil {
			return nil, err
		}
		s.metrics.AddCache(mc.Name, cache)
		s.caches = append(s.caches, cache)
		mgmt = append(mgmt, &clusters.ManagementCluster{Name: mc.Name, Kube: kc, Cache: cache})
	}
	return mgmt, nil
}

// clientLimits are the request rate, burst and per-request timeout of the
// client of management cluster mc: its options, else the defaults. A burst
// below the rate would cap the rate at the burst.
func clientLimits(mc config.ManagementCluster) (qps float32, burst int, timeout time.Duration) {
	qps, burst, timeout = float32(mc.QPS), mc.Burst, mc.RequestTimeout
	if qps == 0 {
		qps = config.DefaultQPS
	}
	if burst == 0 {
		burst = max(config.DefaultBurst, int(math.Ceil(float64(qps))))
	}
	if timeout == 0 {
		timeout = config.DefaultRequestTimeout
	}
	return qps, burst, timeout
}

// openCharts opens the chart source and its cache directory: every problem
// is the configuration's or the host's (nothing is fetched yet).
func (s *Sidecar) openCharts() error {
	cfg := s.cfg.Chart
	var err error
	s.charts, err = release.NewCharts(release.Source{
		Repository: cfg.Repository, Name: cfg.Name, CAFile: cfg.CAFile,
		Username: cfg.Username, Password: cfg.Password, PlainHTTP: cfg.PlainHTTP,
	}, release.CacheOptions{Dir: cfg.CacheDir, IndexTTL: cfg.IndexTTL}, s.log)
	var dirErr *release.CacheDirError
	switch {
	case errors.As(err, &dirErr):
		return config.Problem("chart.cacheDir", cfg.CacheDir, err)
	case err != nil:
		return config.Problem("chart.repository", cfg.Repository, err)
	}
	return nil
}

// domain builds the Helm and OpenStack adapters and the
// service carrying out Magnum's operations over them.
func (s *Sidecar) newDomain(mgmt []*clusters.ManagementCluster, gitOps *clusters.GitOps) (*clusters.Service, error) {
	cfg := s.cfg
	openStack, err := openstack.New(openstack.Config{
		CloudsFile: cfg.OpenStack.CloudsFile, Cloud: cfg.OpenStack.Cloud, AuthURL: cfg.OpenStack.AuthURL,
		Region: cfg.OpenStack.Region, Interface: cfg.OpenStack.Interface, CAFile: cfg.OpenStack.CAFile, Timeout: cfg.OpenStack.Timeout,
		MinFlavorRAMMiB: cfg.OpenStack.MinFlavorRAMMiB, MinFlavorVCPUs: cfg.OpenStack.MinFlavorVCPUs,
		CredentialRoles: cfg.OpenStack.CredentialRoles(), CredentialLifetime: cfg.OpenStack.ApplicationCredentialLifetime,
	}, s.log)
	if err != nil {
		var ce *openstack.ConfigError
		if errors.As(err, &ce) {
			return nil, config.Problem(ce.Field, ce.Value, err)
		}
		return nil, config.Problem("openstack.cloudsFile", cfg.OpenStack.CloudsFile, err)
	}
	hostname, _ := os.Hostname()
	valuesCfg, err := cfg.ValuesConfig()
	if err != nil {
		return nil, err
	}
	return clusters.New(clusters.Config{
		NamespacePrefix:       cfg.NamespacePrefix,
		Holder:                fmt.Sprintf("%s-%d-%d", hostname, os.Getpid(), time.Now().UnixNano()%1e6),
		LockTTL:               cfg.Timeouts.Lock,
		Values:                valuesCfg,
		CredentialRenewBefore: cfg.OpenStack.ApplicationCredentialRenewBefore,
		Status: capistatus.Config{
			UpdateTimeout: cfg.Timeouts.Update, DeleteTimeout: cfg.Timeouts.Delete,
			DefaultCreateTimeout: cfg.Timeouts.DefaultCreate, AddonFailureGrace: cfg.Timeouts.AddonFailureGrace,
		},
	}, clusters.Deps{
		ManagementClusters: mgmt,
		Default:            cfg.DefaultManagementCluster,
		Releases:           release.NewManager(release.Options{HistoryMax: cfg.Helm.HistoryMax, Timeout: cfg.Helm.Timeout, Observe: s.metrics.ObserveHelm}, s.log),
		Charts:             s.charts,
		OpenStack:          openStack,
		Log:                s.log,
		GitOps:             gitOps,
	})
}

// gitOps is the Argo CD hand-off's configuration; nil when the site has it
// off. Its own cluster's client is built here (no I/O), when it has one.
func (s *Sidecar) gitOps(o options) (*clusters.GitOps, error) {
	a := s.cfg.ArgoCD
	if !a.Enabled {
		return nil, nil
	}
	g := &clusters.GitOps{RegisterByDefault: a.RegisterByDefault, Namespace: a.Namespace, Project: a.Project, Observe: s.metrics.ObserveArgoCD}
	if a.Kubeconfig == "" {
		return g, nil
	}
	rc, err := kube.LoadRESTConfig(a.Kubeconfig, a.Context)
	if err != nil {
		return nil, config.Problem("argocd.kubeconfig", a.Kubeconfig, err)
	}
	rc.QPS, rc.Burst, rc.Timeout = config.DefaultQPS, config.DefaultBurst, config.DefaultRequestTimeout
	if o.wrapKube != nil {
		rc.Wrap(o.wrapKube)
	}
	if g.Target, err = kube.Connect("argocd", rc); err != nil {
		return nil, config.Problem("argocd.kubeconfig", a.Kubeconfig, err)
	}
	return g, nil
}

// Close releases the listener (and its unix socket) when Serve never ran;
// after Serve it does nothing, Serve having released it.
func (s *Sidecar) Close() error {
	if s.served.Swap(true) {
		return nil
	}
	err := s.lis.Close()
	s.removeSocket()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// removeSocket removes the unix socket file, so the next start finds no
// stale one.
func (s *Sidecar) removeSocket() {
	if path, ok := strings.CutPrefix(s.cfg.Listen, "unix://"); ok {
		_ = os.Remove(path)
	}
}
