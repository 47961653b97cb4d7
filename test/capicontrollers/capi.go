package capicontrollers

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"sigs.k8s.io/cluster-api/api/core/v1beta2/index"
	kubeadmbootstrapcontrollers "sigs.k8s.io/cluster-api/bootstrap/kubeadm/controllers"
	bootstrapwebhooks "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks"
	"sigs.k8s.io/cluster-api/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/remote"
	kubeadmcontrolplanecontrollers "sigs.k8s.io/cluster-api/controlplane/kubeadm/controllers"
	controlplanewebhooks "sigs.k8s.io/cluster-api/controlplane/kubeadm/webhooks"
	"sigs.k8s.io/cluster-api/webhooks"
)

// setupCAPI registers Cluster API's controllers and webhooks as its three
// managers' main.go files do (core, kubeadm control plane, kubeadm
// bootstrap), with their default settings except where Options say
// otherwise, in one manager. ClusterClass, MachinePool, ClusterResourceSet
// and the runtime SDK are off: the chart uses none of them.
func setupCAPI(ctx context.Context, mgr manager.Manager, opts Options) error {
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return fmt.Errorf("adding Cluster API's indexes: %w", err)
	}
	// Cluster API's "secret caching client": Secrets carrying the
	// cluster-name label from the manager's cache.
	secretCachingClient, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return err
	}
	concurrency := controller.Options{MaxConcurrentReconciles: opts.Concurrency}
	clusterCache, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache: clustercache.CacheOptions{
			Indexes:  []clustercache.CacheOptionsIndex{clustercache.NodeProviderIDIndex},
			ByObject: map[client.Object]cache.ByObject{&corev1.Node{}: {Transform: cache.TransformStripManagedFields()}},
		},
		Client: clustercache.ClientOptions{
			QPS: 20, Burst: 30, UserAgent: remote.DefaultClusterAPIUserAgent("magnum-capi-testbed"),
			Cache: clustercache.ClientCacheOptions{DisableFor: []client.Object{
				&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Pod{}, &appsv1.DaemonSet{},
				&storagev1.VolumeAttachment{}, &corev1.PersistentVolume{},
			}},
		},
	}, concurrency)
	if err != nil {
		return fmt.Errorf("setting up the cluster cache: %w", err)
	}
	if opts.ConnectionRetry > 0 {
		// As Cluster API's own envtest suites do: a workload cluster's API
		// server comes up seconds after its endpoint is known, and waiting
		// the default 30 seconds before trying again would be most of a
		// test's time.
		clusterCache.(interface{ SetConnectionCreationRetryInterval(time.Duration) }).SetConnectionCreationRetryInterval(opts.ConnectionRetry)
	}

	c, api := mgr.GetClient(), mgr.GetAPIReader()
	setups := []struct {
		name  string
		setup func() error
	}{
		{"Cluster", func() error {
			return (&controllers.ClusterReconciler{Client: c, APIReader: api, ClusterCache: clusterCache,
				RemoteConnectionGracePeriod: 50 * time.Second}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"Machine", func() error {
			return (&controllers.MachineReconciler{Client: c, APIReader: api, ClusterCache: clusterCache,
				RemoteConditionsGracePeriod: 5 * time.Minute}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"MachineSet", func() error {
			return (&controllers.MachineSetReconciler{Client: c, APIReader: api, ClusterCache: clusterCache}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"MachineDeployment", func() error {
			return (&controllers.MachineDeploymentReconciler{Client: c, APIReader: api}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"MachineHealthCheck", func() error {
			return (&controllers.MachineHealthCheckReconciler{Client: c, ClusterCache: clusterCache}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"KubeadmControlPlane", func() error {
			return (&kubeadmcontrolplanecontrollers.KubeadmControlPlaneReconciler{
				Client: c, APIReader: api, SecretCachingClient: secretCachingClient, ClusterCache: clusterCache,
				EtcdDialTimeout: 10 * time.Second, EtcdCallTimeout: 15 * time.Second,
				RemoteConditionsGracePeriod: 5 * time.Minute,
			}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: opts.Concurrency, ReconciliationTimeout: 3 * time.Minute})
		}},
		{"KubeadmConfig", func() error {
			return (&kubeadmbootstrapcontrollers.KubeadmConfigReconciler{
				Client: c, SecretCachingClient: secretCachingClient, ClusterCache: clusterCache, TokenTTL: 15 * time.Minute,
			}).SetupWithManager(ctx, mgr, concurrency)
		}},
		{"Cluster webhook", func() error {
			return (&webhooks.Cluster{Client: c, ClusterCacheReader: clusterCache}).SetupWebhookWithManager(mgr)
		}},
		{"Machine webhook", func() error { return (&webhooks.Machine{}).SetupWebhookWithManager(mgr) }},
		{"MachineSet webhook", func() error { return (&webhooks.MachineSet{}).SetupWebhookWithManager(mgr) }},
		{"MachineDeployment webhook", func() error { return (&webhooks.MachineDeployment{}).SetupWebhookWithManager(mgr) }},
		{"MachineHealthCheck webhook", func() error { return (&webhooks.MachineHealthCheck{}).SetupWebhookWithManager(mgr) }},
		{"MachineDrainRule webhook", func() error { return (&webhooks.MachineDrainRule{}).SetupWebhookWithManager(mgr) }},
		{"KubeadmControlPlane webhook", func() error {
			return (&controlplanewebhooks.KubeadmControlPlane{}).SetupWebhookWithManager(mgr)
		}},
		{"KubeadmControlPlane scale webhook", func() error {
			return (&controlplanewebhooks.ScaleValidator{Client: c}).SetupWebhookWithManager(mgr)
		}},
		{"KubeadmControlPlaneTemplate webhook", func() error {
			return (&controlplanewebhooks.KubeadmControlPlaneTemplate{}).SetupWebhookWithManager(mgr)
		}},
		{"KubeadmConfig webhook", func() error { return (&bootstrapwebhooks.KubeadmConfig{}).SetupWebhookWithManager(mgr) }},
		{"KubeadmConfigTemplate webhook", func() error {
			return (&bootstrapwebhooks.KubeadmConfigTemplate{}).SetupWebhookWithManager(mgr)
		}},
	}
	for _, s := range setups {
		if err := s.setup(); err != nil {
			return fmt.Errorf("setting up Cluster API's %s: %w", s.name, err)
		}
	}
	return nil
}
