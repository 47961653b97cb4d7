package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// Config is everything the sidecar reads at start.
type Config struct {
	// Listen is unix:///path or host:port (TCP requires TLS).
	Listen string `mapstructure:"listen"`
	// SocketGroup may connect to the unix socket (mode 0660); empty: owner only (0600).
	SocketGroup string `mapstructure:"socketGroup"`
	// MetricsAddress serves Prometheus metrics on /metrics; empty disables.
	MetricsAddress string `mapstructure:"metricsAddress"`
	// Pprof adds Go's /debug/pprof/ profiles to the metrics server, to find
	// where memory or CPU goes at a site; off by default.
	Pprof bool `mapstructure:"pprof"`
	// GCPercent is Go's GOGC for the sidecar (see docs/configuration.md).
	GCPercent int `mapstructure:"gcPercent"`
	Log       Log `mapstructure:"log"`
	TLS       TLS `mapstructure:"tls"`

	// NamespacePrefix starts the per-project namespaces: <prefix>-<project>.
	NamespacePrefix string `mapstructure:"namespacePrefix"`
	// ManagementClusters are where clusters are placed; the template label
	// capi_management_cluster picks one by name, else Default.
	ManagementClusters       []ManagementCluster `mapstructure:"managementClusters"`
	DefaultManagementCluster string              `mapstructure:"defaultManagementCluster"`

	Chart     Chart     `mapstructure:"chart"`
	Helm      Helm      `mapstructure:"helm"`
	OpenStack OpenStack `mapstructure:"openstack"`
	Timeouts  Timeouts  `mapstructure:"timeouts"`
	Values    Values    `mapstructure:"values"`
	ArgoCD    ArgoCD    `mapstructure:"argocd"`
}

// ArgoCD is the GitOps hand-off: registering clusters that reached
// CREATE_COMPLETE as Argo CD cluster Secrets (docs/gitops.md).
type ArgoCD struct {
	// Enabled turns the hand-off on for the site; off, nothing is
	// registered and the argocd_register label is ignored.
	Enabled bool `mapstructure:"enabled"`
	// RegisterByDefault registers every cluster whose template does not say
	// argocd_register=false; off, only templates with argocd_register=true.
	RegisterByDefault bool `mapstructure:"registerByDefault"`
	// Namespace is Argo CD's namespace, where the cluster Secrets go.
	Namespace string `mapstructure:"namespace"`
	// Kubeconfig and Context name the cluster Argo CD runs on; empty: the
	// management cluster the Magnum cluster lives on.
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
	// Project is the Argo CD project the clusters belong to (the Secret's
	// project field): only that AppProject's Applications may deploy to
	// them. Required when the hand-off is enabled.
	Project string `mapstructure:"project"`
}

type Log struct {
	Level  string `mapstructure:"level"`  // debug, info, warn, error
	Format string `mapstructure:"format"` // json, text
	// File, when set, receives the log (appended; rotate it with
	// copytruncate) instead of standard error: Kolla's services log to
	// /var/log/kolla/<project>/, where its fluentd and logrotate look.
	File string `mapstructure:"file"`
}

type TLS struct {
	CertFile     string `mapstructure:"certFile"`
	KeyFile      string `mapstructure:"keyFile"`
	ClientCAFile string `mapstructure:"clientCAFile"`
}

type ManagementCluster struct {
	Name       string `mapstructure:"name"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
	// QPS, Burst and RequestTimeout bound the sidecar's client of this
	// management cluster; zero: DefaultQPS, DefaultBurst,
	// DefaultRequestTimeout.
	QPS            float64       `mapstructure:"qps"`
	Burst          int           `mapstructure:"burst"`
	RequestTimeout time.Duration `mapstructure:"requestTimeout"`
	// NamespaceClusterRole is the ClusterRole the sidecar binds to its own
	// identity in each project namespace it uses (deploy/rbac); "":
	// DefaultNamespaceClusterRole.
	NamespaceClusterRole string `mapstructure:"namespaceClusterRole"`
}

// DefaultNamespaceClusterRole is deploy/rbac's ClusterRole of the sidecar's
// rights inside a project namespace.
const DefaultNamespaceClusterRole = "magnum-capi-namespace"

// The management-cluster client's limits when an entry sets none: a burst
// of creates is not throttled, and a hung API server cannot wedge a call.
const (
	DefaultQPS            = 50
	DefaultBurst          = 100
	DefaultRequestTimeout = 30 * time.Second
)

type Chart struct {
	// Repository: https://... repository, oci://registry/path, or a local path.
	Repository string `mapstructure:"repository"`
	Name       string `mapstructure:"name"`
	// Version is used unless a template's capi_helm_chart_version label says otherwise.
	Version   string `mapstructure:"version"`
	CAFile    string `mapstructure:"caFile"`
	Username  string `mapstructure:"username"`
	Password  string `mapstructure:"password"`
	PlainHTTP bool   `mapstructure:"plainHTTP"`
	CacheDir  string `mapstructure:"cacheDir"`
	// IndexTTL is how long a repository's index is trusted before refresh.
	IndexTTL time.Duration `mapstructure:"indexTTL"`
}

type Helm struct {
	HistoryMax int           `mapstructure:"historyMax"`
	Timeout    time.Duration `mapstructure:"timeout"`
}

// OpenStack is the sidecar's own identity and how clusters reach OpenStack.
type OpenStack struct {
	// CloudsFile and Cloud name the sidecar's service identity (deleting
	// application credentials when the user's token is gone).
	CloudsFile string `mapstructure:"cloudsFile"`
	Cloud      string `mapstructure:"cloud"`
	// AuthURL is Keystone's public endpoint written into clusters'
	// clouds.yaml, when Magnum's request context lacks one.
	AuthURL string `mapstructure:"authURL"`
	// Interface and Region are written into clusters' clouds.yaml.
	Interface string `mapstructure:"interface"`
	Region    string `mapstructure:"region"`
	// CAFile is the bundle clusters must trust to reach OpenStack's APIs
	// (written as the Secret's cacert); empty for public CAs.
	CAFile string `mapstructure:"caFile"`
	// Timeout bounds each OpenStack API request.
	Timeout time.Duration `mapstructure:"timeout"`
	// MinFlavorRAMMiB and MinFlavorVCPUs refuse node groups whose flavor
	// is too small to run a Kubernetes node; 0: no minimum.
	MinFlavorRAMMiB int `mapstructure:"minFlavorRAMMiB"`
	MinFlavorVCPUs  int `mapstructure:"minFlavorVCPUs"`
	// ApplicationCredentialRoles are the roles a cluster's application
	// credential may get: those of them the user's token carries. ["*"]:
	// every role of the token.
	ApplicationCredentialRoles []string `mapstructure:"applicationCredentialRoles"`
	// ApplicationCredentialLifetime is how long a cluster's application
	// credential lives (0: it never expires); operations carrying the
	// user's token renew it ApplicationCredentialRenewBefore its expiry.
	ApplicationCredentialLifetime    time.Duration `mapstructure:"applicationCredentialLifetime"`
	ApplicationCredentialRenewBefore time.Duration `mapstructure:"applicationCredentialRenewBefore"`
}

// DefaultApplicationCredentialRoles are what a cluster's components need of
// the cloud. CAPO (Nova, Neutron, Glance, Cinder), the cloud controller
// manager and the Cinder CSI driver act as a project member (member implies
// reader); Octavia's legacy policies, still the default where secure RBAC is
// off, want load-balancer_member for the API server's and Services' load
// balancers. A user's other roles (admin above all) stay out of the
// workload cluster.
var DefaultApplicationCredentialRoles = []string{"member", "load-balancer_member"}

// CredentialRoles is ApplicationCredentialRoles as the OpenStack adapter
// takes it: empty for every role of the token.
func (o OpenStack) CredentialRoles() []string {
	if len(o.ApplicationCredentialRoles) == 1 && o.ApplicationCredentialRoles[0] == "*" {
		return nil
	}
	return o.ApplicationCredentialRoles
}

type Timeouts struct {
	Update            time.Duration `mapstructure:"update"`
	Delete            time.Duration `mapstructure:"delete"`
	DefaultCreate     time.Duration `mapstructure:"defaultCreate"`
	AddonFailureGrace time.Duration `mapstructure:"addonFailureGrace"`
	// Lock is how long a per-cluster Lease outlives a sidecar that died.
	Lock time.Duration `mapstructure:"lock"`
}

// Values shapes the values mapping (see docs/labels.md); ValuesConfig turns
// it into the mapping's helmvalues.Config.
type Values struct {
	// StrictLabels turns unknown labels from warnings into errors.
	StrictLabels bool `mapstructure:"strictLabels"`
	// LabelDefaults are site defaults per label, below template and
	// cluster labels.
	LabelDefaults map[string]string `mapstructure:"labelDefaults"`
	// KeystoneAuthURL is the Keystone URL k8s-keystone-auth uses
	// (keystone_auth_enabled).
	KeystoneAuthURL string `mapstructure:"keystoneAuthURL"`
	// CSICinderDefaultVolumeType backs the default StorageClass.
	CSICinderDefaultVolumeType string `mapstructure:"csiCinderDefaultVolumeType"`
	// CSICinderAllowedTopologies are the availability zones the default
	// Cinder StorageClass provisions in.
	CSICinderAllowedTopologies []string `mapstructure:"csiCinderAllowedTopologies"`
	// RegistryMirrors are site-wide containerd mirrors per registry. A list,
	// not a map keyed by host: viper splits keys at dots (docker.io).
	RegistryMirrors []RegistryMirror `mapstructure:"registryMirrors"`
	// MirroredRegistries are what container_infra_prefix mirrors; empty:
	// the chart's five.
	MirroredRegistries []string `mapstructure:"mirroredRegistries"`
	// KeepChartRegistryMirrors keeps the chart's own mirrors (those adopted
	// clusters were created with) when no mirror is configured.
	KeepChartRegistryMirrors bool `mapstructure:"keepChartRegistryMirrors"`
	// TrustedCAs are PEM files added to every node's trust store.
	TrustedCAs []TrustedCA `mapstructure:"trustedCAs"`
	// GPUPCIAliases are the Nova PCI aliases that are GPUs (scale from
	// zero counts them in a flavor's pci_passthrough:alias).
	GPUPCIAliases []string `mapstructure:"gpuPCIAliases"`
	// GPUResourceName is the resource GPU nodes advertise; empty:
	// nvidia.com/gpu.
	GPUResourceName string `mapstructure:"gpuResourceName"`
}

// RegistryMirror is one registry's mirrors.
type RegistryMirror struct {
	Registry string   `mapstructure:"registry"`
	Mirrors  []string `mapstructure:"mirrors"`
}

// TrustedCA is one named PEM bundle, read from File at start.
type TrustedCA struct {
	Name string `mapstructure:"name"`
	File string `mapstructure:"file"`
}

// Defaults are every option's value when nothing sets it.
func Defaults() map[string]any {
	return map[string]any{
		"listen":                               "unix:///run/magnum-capi/magnum-capi.sock",
		"metricsAddress":                       "127.0.0.1:9561",
		"pprof":                                false,
		"gcPercent":                            50,
		"log.level":                            "info",
		"log.format":                           "json",
		"namespacePrefix":                      "magnum",
		"defaultManagementCluster":             "",
		"chart.repository":                     "https://azimuth-cloud.github.io/capi-helm-charts",
		"chart.name":                           "openstack-cluster",
		"chart.version":                        "0.27.0",
		"chart.plainHTTP":                      false,
		"chart.cacheDir":                       "/var/cache/magnum-capi/charts",
		"chart.indexTTL":                       "10m",
		"helm.historyMax":                      10,
		"helm.timeout":                         "5m",
		"openstack.cloud":                      "magnum",
		"openstack.interface":                  "public",
		"openstack.timeout":                    "30s",
		"openstack.minFlavorRAMMiB":            0,
		"openstack.minFlavorVCPUs":             0,
		"openstack.applicationCredentialRoles": strings.Join(DefaultApplicationCredentialRoles, ","),
		"openstack.applicationCredentialLifetime":    "8760h",
		"openstack.applicationCredentialRenewBefore": "720h",
		"timeouts.update":                            "120m",
		"timeouts.delete":                            "30m",
		"timeouts.defaultCreate":                     "60m",
		"timeouts.addonFailureGrace":                 "10m",
		"timeouts.lock":                              "30s",
		"values.strictLabels":                        false,
		"values.keepChartRegistryMirrors":            false,
		"argocd.enabled":                             false,
		"argocd.registerByDefault":                   true,
		"argocd.namespace":                           "argocd",
	}
}

// Load reads the file (if any), then MAGNUM_CAPI_* variables (nested keys
// joined with _, e.g. MAGNUM_CAPI_CHART_VERSION), over the defaults, and
// validates the result.
func Load(file string, v *viper.Viper) (Config, error) {
	c, err := read(file, v)
	if err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// read decodes the configuration as Load does, without validating it.
func read(file string, v *viper.Viper) (Config, error) {
	if v == nil {
		v = viper.New()
	}
	for k, val := range Defaults() {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	// AutomaticEnv only consults the environment for keys viper already
	// knows (from defaults or the file): bind every option so that, e.g.,
	// MAGNUM_CAPI_TLS_CERTFILE works although tls.certFile has no default.
	for _, o := range Options() {
		if o.Env != "" {
			if err := v.BindEnv(o.Key, o.Env); err != nil {
				return Config{}, err
			}
		}
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("reading configuration %s: %w", file, err)
		}
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, fmt.Errorf("configuration %s: %w", file, err)
	}
	return c, nil
}
