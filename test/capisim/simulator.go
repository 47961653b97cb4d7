package capisim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Simulator plays CAPI, CAPO and the addon provider against one API server.
type Simulator struct {
	// client reads from the manager's informer cache and writes directly.
	client client.Client
	// direct reads Secrets straight from the API server, so that the
	// simulator does not cache every Secret of the management cluster.
	direct client.Client
	scheme *runtime.Scheme
	opts   Options
	log    logr.Logger

	pace   *pacer
	expect *expectations
	faults faultBook
	ips    *ipAllocator

	// certsDone and kubeconfigDone remember the control planes whose CA
	// and kubeconfig Secrets exist, so that Secrets, which the simulator
	// does not cache, are not read on every reconcile.
	certsDone, kubeconfigDone sync.Map

	stop func() error
}

// AddToScheme registers what the simulator reads and writes: the built-in
// kinds and the Cluster API kinds at their storage version, v1beta2.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// New registers the simulator's controllers with mgr; they run when mgr
// starts. mgr's scheme gets the kinds AddToScheme registers.
func New(mgr manager.Manager, opts Options) (*Simulator, error) {
	opts = opts.withDefaults()
	if err := AddToScheme(mgr.GetScheme()); err != nil {
		return nil, fmt.Errorf("registering Cluster API types: %w", err)
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating the simulator's direct client: %w", err)
	}
	s := &Simulator{
		client: mgr.GetClient(),
		direct: direct,
		scheme: mgr.GetScheme(),
		opts:   opts,
		log:    loggerFor(opts.Logger),
		pace:   newPacer(opts.Step),
		expect: newExpectations(),
		ips:    newIPAllocator(),
	}
	s.faults.setGoRules(opts.Rules)
	if err := s.setupControllers(mgr); err != nil {
		return nil, err
	}
	return s, nil
}

// Start runs the simulator in its own manager against cfg until ctx ends or
// Stop is called.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Simulator, error) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering Cluster API types: %w", err)
	}
	// Client-go and controller-runtime log through controller-runtime's
	// global logger, which must be set once per process.
	setGlobalLogger.Do(func() { ctrllog.SetLogger(loggerFor(opts.Logger)) })
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 scheme,
		Logger:                 loggerFor(opts.Logger),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Several simulators may run in one test process; controller names
		// need only be unique within a manager.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the simulator's manager: %w", err)
	}
	s, err := New(mgr, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.Join(errors.New("the simulator's caches did not sync"), <-done)
	}
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}
	return s, nil
}

// Stop stops a simulator made by Start. It does nothing for one made by New,
// whose manager belongs to the caller.
func (s *Simulator) Stop() error {
	if s.stop == nil {
		return nil
	}
	return s.stop()
}

// SetRules replaces the fault rules set from Go.
func (s *Simulator) SetRules(rules ...Rule) { s.faults.setGoRules(rules) }

// faultsFor returns the faults injected into a Cluster.
func (s *Simulator) faultsFor(cluster *clusterv1.Cluster) Faults {
	return s.faults.faultsFor(cluster.Namespace, cluster.Name, cluster.Annotations)
}

var setGlobalLogger sync.Once

func loggerFor(l *slog.Logger) logr.Logger {
	if l == nil {
		return logr.Discard()
	}
	return logr.FromSlogHandler(l.Handler())
}
