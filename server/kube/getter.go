package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter gives Helm one shared connection, discovery cache and REST
// mapper per management cluster, instead of re-reading a kubeconfig and
// re-running discovery for every operation.
type restGetter struct {
	config    *rest.Config
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

func newRESTGetter(config *rest.Config) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	return &restGetter{
		config:    config,
		discovery: cached,
		mapper:    restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil),
	}, nil
}

// InNamespace is a getter whose default namespace is ns: Helm puts the
// chart's namespaced objects there.
func (g *restGetter) InNamespace(ns string) *namespacedGetter {
	return &namespacedGetter{restGetter: g, namespace: ns}
}

type namespacedGetter struct {
	*restGetter
	namespace string
}

func (g *namespacedGetter) ToRESTConfig() (*rest.Config, error) {
	return rest.CopyConfig(g.config), nil
}

func (g *namespacedGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *namespacedGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.mapper, nil }

func (g *namespacedGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{
		Context: clientcmdapi.Context{Namespace: g.namespace},
	})
}

// ResetDiscovery forgets cached discovery, e.g. after CRDs were installed.
func (g *restGetter) ResetDiscovery() {
	g.discovery.Invalidate()
	if r, ok := g.mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}
