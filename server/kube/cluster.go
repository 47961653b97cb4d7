package kube

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster is one management cluster.
type Cluster struct {
	// Name is the name operators gave it in the configuration.
	Name      string
	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface
	Scheme    *runtime.Scheme
	getter    *restGetter
	// leases is the per-cluster Leases' client (see Connect); nil: Client.
	leases client.Client
	// NamespaceRole is the ClusterRole EnsureNamespace binds to the
	// sidecar's identity in each project namespace; "": none (an identity
	// with rights everywhere). See namespace_binding.go.
	NamespaceRole string
	bindings      namespaceBindings
	// clock judges Leases' expiry and renewal deadlines (lease_fencing.go);
	// nil: the real one. Tests skew it.
	clock clock.PassiveClock
	// observed is when this sidecar first saw each version of the Leases
	// it waits for.
	observed leaseObservations
}

func (c *Cluster) clk() clock.PassiveClock {
	if c.clock != nil {
		return c.clock
	}
	return clock.RealClock{}
}

func (c *Cluster) leaseClient() client.Client {
	if c.leases != nil {
		return c.leases
	}
	return c.Client
}

// LoadRESTConfig reads a kubeconfig file; kubeContext "" means its
// current-context. Requests get a timeout so a hung API server cannot wedge
// an operation forever.
func LoadRESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s (context %q): %w", kubeconfig, kubeContext, err)
	}
	return cfg, nil
}

// leaseQPS is the Lease client's request rate: a renewal is two small
// requests per operation every TTL/3, so 200 operations with a 30 s TTL
// need 40 a second.
const leaseQPS = 200

// Connect builds the clients for one management cluster. It does no I/O
// beyond what client construction needs.
func Connect(name string, cfg *rest.Config) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	// The sidecar is the only writer for many clusters at once; client-go's
	// default 5 QPS would throttle a burst of creates.
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "magnum-capi"
	}
	// The chart writes CAPI objects as v1beta1 on purpose (that is what it
	// ships); the API server's deprecation warning on every write is noise.
	cfg.WarningHandler = rest.NoWarnings{}
	scheme := NewScheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	getter, err := newRESTGetter(cfg)
	if err != nil {
		return nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	// Leases get a client of their own: its own rate limiter, so that a
	// burst of operations (200 creates at once, each renewing every TTL/3)
	// does not queue renewals behind each other past the TTL.
	leaseCfg := rest.CopyConfig(cfg)
	leaseCfg.QPS, leaseCfg.Burst, leaseCfg.RateLimiter = max(cfg.QPS, leaseQPS), max(cfg.Burst, 2*leaseQPS), nil
	leases, err := client.New(leaseCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("management cluster %s: %w", name, err)
	}
	return &Cluster{Name: name, Config: cfg, Client: c, Clientset: cs, Scheme: scheme, getter: getter, leases: leases}, nil
}

// HelmGetter is the REST client getter Helm should use for releases in ns.
func (c *Cluster) HelmGetter(ns string) genericclioptions.RESTClientGetter {
	return c.getter.InNamespace(ns)
}
