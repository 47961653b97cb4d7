package helmvalues

import (
	"fmt"
	"sort"
	"strings"
)

// ChartVersion is the openstack-cluster chart release these values are written
// for and validated against.
const ChartVersion = "0.27.0"

// Config is the part of the driver configuration that shapes values. The
// sidecar reads it from its options chart.version and values.* (server/config
// converts them); the JSON names, used by this package's test fixtures, are
// those options' names within values.
type Config struct {
	// DefaultChartVersion is used when the template has no
	// capi_helm_chart_version label.
	DefaultChartVersion string `json:"defaultChartVersion,omitempty"`
	// StrictLabels turns unknown labels from warnings into errors.
	StrictLabels bool `json:"strictLabels,omitempty"`
	// KeystoneAuthURL is the public Keystone URL given to k8s-keystone-auth
	// (keystone_auth_enabled). Never the requester's context.
	KeystoneAuthURL string `json:"keystoneAuthURL,omitempty"`
	// LabelDefaults are site defaults per label, applied below template and
	// cluster labels (StackHPC's [capi_helm_cluster_labels]). They are
	// validated by the same parsers as labels.
	LabelDefaults map[string]string `json:"labelDefaults,omitempty"`
	// CSICinderDefaultVolumeType names the Cinder volume type that backs the
	// cluster's default StorageClass; empty means the first one Cinder lists.
	CSICinderDefaultVolumeType string `json:"csiCinderDefaultVolumeType,omitempty"`
	// CSICinderAllowedTopologies are the availability zones the Cinder
	// StorageClasses are limited to (their allowedTopologies); empty means
	// any.
	CSICinderAllowedTopologies []string `json:"csiCinderAllowedTopologies,omitempty"`
	// RegistryMirrors are site-wide containerd mirrors: registry host → mirror
	// URLs (each ending in the registry API root, e.g.
	// https://mirror.example.com/v2/docker.io).
	RegistryMirrors map[string][]string `json:"registryMirrors,omitempty"`
	// MirroredRegistries are the upstream registries the
	// container_infra_prefix label mirrors. Empty means DefaultMirroredRegistries.
	MirroredRegistries []string `json:"mirroredRegistries,omitempty"`
	// KeepChartRegistryMirrors leaves the chart's own default mirrors (Azimuth's
	// quay.io copies) in place when no mirror is configured, instead of
	// sending registryMirrors: null.
	KeepChartRegistryMirrors bool `json:"keepChartRegistryMirrors,omitempty"`
	// TrustedCAs are PEM certificates, by name, added to every node's trust
	// store (private registries, proxies).
	TrustedCAs map[string]string `json:"trustedCAs,omitempty"`
	// GPUPCIAliases are the Nova PCI aliases (pci_passthrough:alias in a
	// flavor's extra specs) that are GPUs; other aliases are not counted.
	GPUPCIAliases []string `json:"gpuPCIAliases,omitempty"`
	// GPUResourceName is the extended resource a GPU node advertises
	// (capacity.cluster-autoscaler.kubernetes.io/gpu-type); empty means
	// DefaultGPUResourceName.
	GPUResourceName string `json:"gpuResourceName,omitempty"`
}

// DefaultMirroredRegistries are the registries the chart itself mirrors.
var DefaultMirroredRegistries = []string{"docker.io", "ghcr.io", "nvcr.io", "quay.io", "registry.k8s.io"}

// DefaultConfig returns the configuration a fresh deployment starts from.
func DefaultConfig() Config {
	return Config{
		DefaultChartVersion: ChartVersion,
		MirroredRegistries:  append([]string(nil), DefaultMirroredRegistries...),
	}
}

// ValidateConfig checks cfg as Build does, so the sidecar can refuse a bad
// configuration at start instead of at the first request. The error joins
// one *ConfigError per problem, each naming the sidecar option.
func ValidateConfig(cfg Config) error {
	var p problems
	validateConfig(cfg, &p)
	return p.err()
}

// validateConfig checks every configuration value that can reach the values,
// so a bad configuration fails loudly instead of rendering a broken chart.
func validateConfig(cfg Config, p *problems) {
	if cfg.DefaultChartVersion != "" {
		if _, ok := parseSemver(cfg.DefaultChartVersion); !ok {
			p.config("chart.version", cfg.DefaultChartVersion, "expected a semantic version such as "+ChartVersion)
		}
	}
	if cfg.KeystoneAuthURL != "" {
		if msg := checkURL(cfg.KeystoneAuthURL, []string{"https", "http"}); msg != "" {
			p.config("values.keystoneAuthURL", cfg.KeystoneAuthURL, "expected "+msg)
		}
	}
	if cfg.CSICinderDefaultVolumeType != "" {
		if msg := checkChartScalar(cfg.CSICinderDefaultVolumeType); msg != "" {
			p.config("values.csiCinderDefaultVolumeType", cfg.CSICinderDefaultVolumeType, "expected "+msg)
		}
	}
	for _, name := range sortedKeys(cfg.LabelDefaults) {
		spec, ok := labelRegistry[name]
		switch {
		case labelAliases[name] != "":
			p.config("values.labelDefaults."+name, cfg.LabelDefaults[name], "a deprecated label name; use "+labelAliases[name])
		case !ok:
			p.config("values.labelDefaults."+name, cfg.LabelDefaults[name], "not a label this driver reads")
		case spec.Scope == scopeTemplate:
			p.config("values.labelDefaults."+name, cfg.LabelDefaults[name], "this label is read from the cluster template only; set chart.version instead")
		default:
			if _, expected := parseLabelValue(spec, cfg.LabelDefaults[name]); expected != "" {
				p.config("values.labelDefaults."+name, cfg.LabelDefaults[name], "expected "+expected)
			}
		}
	}
	for _, registry := range sortedKeys(cfg.RegistryMirrors) {
		if msg := checkRegistryHost(registry); msg != "" {
			p.config("values.registryMirrors", registry, "expected a registry host: "+msg)
		}
		for _, mirror := range cfg.RegistryMirrors[registry] {
			if msg := checkURL(mirror, []string{"https", "http"}); msg != "" {
				p.config("values.registryMirrors."+registry, mirror, "expected "+msg)
			}
		}
	}
	for _, registry := range cfg.MirroredRegistries {
		if msg := checkRegistryHost(registry); msg != "" {
			p.config("values.mirroredRegistries", registry, "expected a registry host: "+msg)
		}
	}
	validateGPUConfig(cfg, p)
	validateCinderTopologies(cfg, p)
	for _, name := range sortedKeys(cfg.TrustedCAs) {
		if !isDNSLabel(name) {
			p.config("values.trustedCAs", name, "expected a lowercase name of letters, digits and '-' (it becomes a file name)")
		}
		pem := cfg.TrustedCAs[name]
		if !strings.Contains(pem, "-----BEGIN CERTIFICATE-----") || hasTemplateDelimiters(pem) || hasControl(strings.NewReplacer("\n", "", "\r", "").Replace(pem)) {
			p.config("values.trustedCAs."+name, fmt.Sprintf("%d bytes", len(pem)), "expected PEM-encoded certificates")
		}
	}
}

func (cfg Config) mirroredRegistries() []string {
	if len(cfg.MirroredRegistries) == 0 {
		return chartMirroredRegistries
	}
	return cfg.MirroredRegistries
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
