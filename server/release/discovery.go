package release

import (
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
)

// Helm asks the API server what it serves (its version and every API
// group) before each install or upgrade, and invalidates its discovery
// cache to do so: on a management cluster with the CAPI, CAPO and addon
// CRDs that is a fresh discovery per operation, and it throws away the REST
// mapping every other operation shares. The Manager instead keeps Helm's
// Capabilities per management cluster (keyed by the getter's shared
// discovery client) and refreshes them, with the REST mapping, when a
// kind is not found (CRDs installed after the sidecar started) or when
// they are older than capabilitiesTTL (a chart that asks
// .Capabilities.APIVersions sees a new API within that time).

// capabilitiesTTL bounds how long a chart can be rendered against an API
// list that no longer holds.
const capabilitiesTTL = 5 * time.Minute

// maxDiscoveries bounds the cache: getters that make a discovery client per
// call (none of the sidecar's do) would otherwise grow it without end.
const maxDiscoveries = 64

type capabilities struct {
	caps    *chartutil.Capabilities
	fetched time.Time
}

// sharedDiscovery is the Manager's Capabilities per discovery client.
type sharedDiscovery struct {
	mu      sync.Mutex
	entries map[discovery.CachedDiscoveryInterface]capabilities
	now     func() time.Time
}

func newSharedDiscovery() *sharedDiscovery {
	return &sharedDiscovery{entries: map[discovery.CachedDiscoveryInterface]capabilities{}, now: time.Now}
}

// capabilities are the API server's version and API list for g, from the
// cache unless stale or refresh is set; each caller gets its own copy.
func (d *sharedDiscovery) capabilities(g genericclioptions.RESTClientGetter, refresh bool) (*chartutil.Capabilities, error) {
	dc, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.entries[dc]; ok && !refresh && d.now().Sub(e.fetched) < capabilitiesTTL {
		return e.caps.Copy(), nil
	}
	// Forget what the shared client and REST mapper know, so that Helm's
	// mapping of the chart's kinds sees what the API list says.
	dc.Invalidate()
	if m, err := g.ToRESTMapper(); err == nil {
		meta.MaybeResetRESTMapper(m)
	}
	caps, err := fetchCapabilities(dc)
	if err != nil {
		return nil, err
	}
	if len(d.entries) >= maxDiscoveries {
		clear(d.entries)
	}
	d.entries[dc] = capabilities{caps: caps, fetched: d.now()}
	return caps.Copy(), nil
}

// fetchCapabilities is what Helm's own Configuration.getCapabilities
// asks, without its cache invalidation: the server version and the
// group/version list (an API group whose service is down is left out, as
// Helm does).
func fetchCapabilities(dc discovery.CachedDiscoveryInterface) (*chartutil.Capabilities, error) {
	version, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("could not get server version from Kubernetes: %w", err)
	}
	apiVersions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("could not get apiVersions from Kubernetes: %w", err)
	}
	return &chartutil.Capabilities{
		APIVersions: apiVersions,
		KubeVersion: chartutil.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor},
		HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
	}, nil
}

// kindNotFound: the chart names a kind the cached REST mapping does not
// know (maybe its CRD was installed since).
func kindNotFound(err error) bool {
	return meta.IsNoMatchError(err)
}
