package capicontrollers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/feature"
	cloudv1 "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/cloud/api/v1alpha1"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	inmemoryserver "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server"
	"sigs.k8s.io/cluster-api/util/secret"
)

// Options tune the controllers. The zero value is usable.
type Options struct {
	// Step is OpenStack's pace: each step of the OpenStack provider (a
	// network, a load balancer, a server building, a deletion) and of the
	// addon stand-in takes this long. Default 200ms.
	Step time.Duration
	// RulesConfigMap is where fault rules are read. Default
	// capisim-system/capisim.
	RulesConfigMap types.NamespacedName
	// Concurrency is the number of concurrent reconciles per controller.
	// Default 10 (Cluster API's own default for most of its controllers).
	Concurrency int
	// SyncPeriod is how often every object is reconciled anyway. Default
	// 10 minutes, Cluster API's.
	SyncPeriod time.Duration
	// ConnectionRetry is how soon the cluster cache tries again to connect
	// to a workload cluster it could not reach. Default (0) Cluster API's
	// 30 seconds.
	ConnectionRetry time.Duration
	// FeatureGates are Cluster API feature gates to set, as its managers'
	// --feature-gates flag takes them ("ReconcilerRateLimiting=false").
	FeatureGates string
	// CAPIDir is the sigs.k8s.io/cluster-api module directory, for its
	// webhook manifests; found in the module cache when empty.
	CAPIDir string
	// WorkDir holds the webhook serving certificate; a temporary directory
	// when empty.
	WorkDir string
	// Logger receives the controllers' logs; nil discards them.
	Logger *slog.Logger
}

// DefaultRulesConfigMap is where fault rules are read unless
// Options.RulesConfigMap says otherwise: the name the removed simulator
// (test/capisim) read them from, kept because the Python tests write it.
var DefaultRulesConfigMap = types.NamespacedName{Namespace: "capisim-system", Name: "capisim"}

func (o Options) withDefaults() Options {
	if o.Step <= 0 {
		o.Step = 200 * time.Millisecond
	}
	if o.RulesConfigMap.Name == "" {
		o.RulesConfigMap = DefaultRulesConfigMap
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 10
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = 10 * time.Minute
	}
	return o
}

// Scheme registers what the manager reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// workloadScheme is what the in-memory workload clusters store.
func workloadScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		cloudv1.AddToScheme, corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme,
		storagev1.AddToScheme, apiextensionsv1.AddToScheme, policyv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run starts everything against the management cluster at cfg and runs
// until ctx ends. ready is called once the caches are synced and the
// webhooks registered: from then on objects written are defaulted and
// reconciled.
func Run(ctx context.Context, cfg *rest.Config, opts Options, ready func()) (err error) {
	opts = opts.withDefaults()
	log := logr.Discard()
	if opts.Logger != nil {
		log = logr.FromSlogHandler(opts.Logger.Handler())
	}
	ctrllog.SetLogger(log)
	klog.SetLogger(log)
	// The chart uses no MachinePool; its controller is not run.
	if err := feature.MutableGates.Set("MachinePool=false"); err != nil {
		return err
	}
	if opts.FeatureGates != "" {
		if err := feature.MutableGates.Set(opts.FeatureGates); err != nil {
			return fmt.Errorf("feature gates %q: %w", opts.FeatureGates, err)
		}
	}
	if opts.CAPIDir == "" {
		if opts.CAPIDir, err = capiModuleDir(ctx); err != nil {
			return err
		}
	}
	if opts.WorkDir == "" {
		if opts.WorkDir, err = os.MkdirTemp("", "capi-controllers-"); err != nil {
			return err
		}
		defer os.RemoveAll(opts.WorkDir)
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := labelContracts(ctx, direct); err != nil {
		return err
	}

	caBundle, err := servingCert(opts.WorkDir)
	if err != nil {
		return fmt.Errorf("making the webhook serving certificate: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	syncPeriod := opts.SyncPeriod
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{CacheSyncTimeout: 5 * time.Minute, UsePriorityQueue: ptrTrue()},
		Cache:                  managerCacheOptions(syncPeriod, opts.RulesConfigMap.Namespace),
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor:   []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}},
			Unstructured: true,
		}},
		WebhookServer: webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: opts.WorkDir}),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := setupCAPI(ctx, mgr, opts); err != nil {
		return err
	}

	wscheme, err := workloadScheme()
	if err != nil {
		return err
	}
	runtimeMgr := inmemoryruntime.NewManager(wscheme)
	if err := runtimeMgr.Start(ctx); err != nil {
		return fmt.Errorf("starting the in-memory runtime: %w", err)
	}
	// Ports are chosen by the provider; the debug server takes any free one.
	mux, err := inmemoryserver.NewWorkloadClustersMux(runtimeMgr, "127.0.0.1", inmemoryserver.CustomPorts{MinPort: 1, MaxPort: 65535, DebugPort: 0})
	if err != nil {
		return fmt.Errorf("starting the in-memory workload clusters' server: %w", err)
	}
	p := &Provider{
		client: mgr.GetClient(), direct: direct, opts: opts, log: log,
		pace: newPacer(opts.Step), ips: newIPAllocator(), workloads: newWorkloads(runtimeMgr, mux),
		wake: make(chan event.GenericEvent),
	}
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = errors.Join(err, p.workloads.close(shutdownCtx))
	}()
	if err := p.setup(ctx, mgr); err != nil {
		return err
	}
	if err := setupGC(mgr, direct); err != nil {
		return err
	}
	if err := mgr.Add(outages{Provider: p, wake: p.wake}); err != nil {
		return err
	}

	configs, err := webhookConfigurations(opts.CAPIDir, fmt.Sprintf("https://127.0.0.1:%d", port), caBundle)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.Join(errors.New("the manager's caches did not sync"), <-done)
	}
	if err := waitStarted(ctx, mgr.GetWebhookServer()); err != nil {
		return errors.Join(err, <-done)
	}
	if err := installWebhooks(ctx, direct, configs); err != nil {
		cancel()
		return errors.Join(err, <-done)
	}
	defer func() {
		uninstallCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = errors.Join(err, uninstallWebhooks(uninstallCtx, direct, configs))
	}()
	if ready != nil {
		ready()
	}
	return <-done
}

// managerCacheOptions are what the kubeadm control plane and bootstrap
// managers use (their internal/setup), which the core one's are a subset
// of: Secrets cached only when they carry the cluster-name label, with data
// dropped but for those of Cluster API's purposes (CAs, kubeconfig); plus
// ConfigMaps only where the fault rules live. Managed fields stay on the
// other kinds: the core controllers read them to repair the
// kube-apiserver managedFields issue, and would otherwise "repair" every
// object on every reconcile. (KCP's own cache also drops worker Machines' specs and leaves out
// worker KubeadmConfigs; one manager for all controllers cannot.)
func managerCacheOptions(syncPeriod time.Duration, rulesNamespace string) cache.Options {
	hasClusterName := client.HasLabels{clusterv1.ClusterNameLabel}
	sel := &client.ListOptions{}
	hasClusterName.ApplyToList(sel)
	return cache.Options{
		SyncPeriod: &syncPeriod,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Label: sel.LabelSelector,
				Transform: func(in any) (any, error) {
					if s, ok := in.(*corev1.Secret); ok {
						s.SetManagedFields(nil)
						if !secret.HasPurposeSuffix(s.Name) {
							s.Data = nil
						}
					}
					return in, nil
				},
			},
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{rulesNamespace: {}}},
		},
	}
}

// waitStarted waits for the webhook server to listen.
func waitStarted(ctx context.Context, srv webhook.Server) error {
	check := srv.StartedChecker()
	for {
		if check(nil) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// capiModuleDir finds the sigs.k8s.io/cluster-api module this binary was
// built with in the module cache.
func capiModuleDir(ctx context.Context) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("no build information: pass the Cluster API module directory")
	}
	version := ""
	for _, dep := range info.Deps {
		if dep.Path == "sigs.k8s.io/cluster-api" {
			version = dep.Version
		}
	}
	if version == "" {
		return "", errors.New("this binary was not built with sigs.k8s.io/cluster-api")
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" {
		out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
		if err != nil {
			return "", fmt.Errorf("locating the Go module cache: %w", err)
		}
		cache = strings.TrimSpace(string(out))
	}
	dir := filepath.Join(cache, "sigs.k8s.io", "cluster-api@"+version)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("sigs.k8s.io/cluster-api %s is not in the module cache at %s: %w", version, dir, err)
	}
	return dir, nil
}
