package clusters

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// Config shapes the operations.
type Config struct {
	// NamespacePrefix starts every per-project namespace: "<prefix>-<project>".
	NamespacePrefix string
	// Holder identifies this sidecar in the per-cluster Leases.
	Holder string
	// LockTTL is how long a Lease outlives a holder that stopped renewing it.
	LockTTL time.Duration
	// Values configures the values mapping.
	Values helmvalues.Config
	// Status configures status derivation (timeouts, grace periods).
	Status capistatus.Config
	// CredentialRenewBefore is how long before its expiry an operation
	// carrying the user's token renews the cluster's application credential.
	CredentialRenewBefore time.Duration
}

// ManagementCluster is one management cluster clusters can be placed on.
type ManagementCluster struct {
	Name  string
	Kube  Kube
	Cache WatchCache
}

// Service carries out Magnum's operations.
type Service struct {
	cfg       Config
	mgmt      []*ManagementCluster
	byName    map[string]*ManagementCluster
	fallback  *ManagementCluster
	releases  Releases
	charts    Charts
	openstack OpenStack
	log       *slog.Logger
	now       func() time.Time
	deployed  deployed
	// writing are the deploys that outlived their caller.
	writing writing
	deletes deleteRequests
	gitops  *gitops
	// credentials is what the credential watch found.
	credentials credentialWatch
}

// Deps are the adapters a Service uses.
type Deps struct {
	// ManagementClusters in configuration order; Default names the one new
	// clusters go to when their template does not choose.
	ManagementClusters []*ManagementCluster
	Default            string
	Releases           Releases
	Charts             Charts
	OpenStack          OpenStack
	Log                *slog.Logger
	// GitOps, when set, registers complete clusters with Argo CD.
	GitOps *GitOps
}

// New checks the dependencies and returns a Service.
func New(cfg Config, d Deps) (*Service, error) {
	if len(d.ManagementClusters) == 0 {
		return nil, fmt.Errorf("no management cluster configured")
	}
	if d.Releases == nil || d.Charts == nil || d.OpenStack == nil || d.Log == nil {
		return nil, fmt.Errorf("clusters.New: Releases, Charts, OpenStack and Log are required")
	}
	if cfg.NamespacePrefix == "" {
		cfg.NamespacePrefix = "magnum"
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = 30 * time.Second
	}
	if cfg.Holder == "" {
		return nil, fmt.Errorf("clusters.New: Config.Holder is required")
	}
	s := &Service{
		cfg: cfg, mgmt: d.ManagementClusters, byName: map[string]*ManagementCluster{},
		releases: d.Releases, charts: d.Charts, openstack: d.OpenStack, log: d.Log, now: time.Now,
		gitops: newGitOps(d.GitOps),
	}
	for _, mc := range d.ManagementClusters {
		s.byName[mc.Name] = mc
	}
	s.fallback = s.byName[d.Default]
	if d.Default == "" {
		s.fallback = d.ManagementClusters[0]
	}
	if s.fallback == nil {
		return nil, fmt.Errorf("default management cluster %q is not configured", d.Default)
	}
	return s, nil
}

// namespace is where a project's clusters live.
func (s *Service) namespace(spec Spec) string {
	return helmvalues.Namespace(s.cfg.NamespacePrefix, spec.Cluster.ProjectID)
}
