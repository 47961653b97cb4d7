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
}

type Log struct {
	Level  string `mapstructure:"level"`  // debug, info, warn, error
	Format string `mapstructure:"format"` // json, text
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
}

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
}

type Timeouts struct {
	Update            time.Duration `mapstructure:"update"`
	Delete            time.Duration `mapstructure:"delete"`
	DefaultCreate     time.Duration `mapstructure:"defaultCreate"`
	AddonFailureGrace time.Duration `mapstructure:"addonFailureGrace"`
	// Lock is how long a per-cluster Lease outlives a sidecar that died.
	Lock time.Duration `mapstructure:"lock"`
}

// Values shapes the values mapping (see docs/labels.md).
type Values struct {
	// StrictLabels turns unknown labels from warnings into errors.
	StrictLabels bool `mapstructure:"strictLabels"`
}

// Defaults are every option's value when nothing sets it.
func Defaults() map[string]any {
	return map[string]any{
		"listen":                     "unix:///run/magnum-capi/magnum-capi.sock",
		"metricsAddress":             "127.0.0.1:9561",
		"pprof":                      false,
		"gcPercent":                  50,
		"log.level":                  "info",
		"log.format":                 "json",
		"namespacePrefix":            "magnum",
		"defaultManagementCluster":   "",
		"chart.repository":           "https://azimuth-cloud.github.io/capi-helm-charts",
		"chart.name":                 "openstack-cluster",
		"chart.version":              "0.27.0",
		"chart.plainHTTP":            false,
		"chart.cacheDir":             "/var/cache/magnum-capi/charts",
		"chart.indexTTL":             "10m",
		"helm.historyMax":            10,
		"helm.timeout":               "5m",
		"openstack.cloud":            "magnum",
		"openstack.interface":        "public",
		"openstack.timeout":          "30s",
		"timeouts.update":            "120m",
		"timeouts.delete":            "30m",
		"timeouts.defaultCreate":     "60m",
		"timeouts.addonFailureGrace": "10m",
		"timeouts.lock":              "30s",
		"values.strictLabels":        false,
	}
}

// Load reads the file (if any), then MAGNUM_CAPI_* variables (nested keys
// joined with _, e.g. MAGNUM_CAPI_CHART_VERSION), over the defaults, and
// validates the result.
func Load(file string, v *viper.Viper) (Config, error) {
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
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}
