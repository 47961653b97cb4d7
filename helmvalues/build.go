package helmvalues

import (
	"fmt"
)

// Result is one rendered set of values.
type Result struct {
	// Values are the openstack-cluster chart values with the types a
	// values file gives them: map[string]any, []any, string, float64 and
	// bool only (asValuesFile).
	Values map[string]any
	// ChartVersion is the chart release to install.
	ChartVersion string
	// Warnings are things the user should know that do not stop the build:
	// ignored or deprecated labels, defaults substituted for Magnum values.
	Warnings []string
	// ServerGroupPolicy is the policy of the Nova server groups the sidecar
	// makes for the cluster (label server_group_policies).
	ServerGroupPolicy string
	// MachineAnnotations are annotations for node groups' MachineDeployments,
	// by chart node group name (the capi.stackhpc.com/node-group label):
	// the autoscaler's capacity annotations, which chart 0.27 has no value
	// for, so the sidecar's Helm post-renderer adds them.
	MachineAnnotations map[string]map[string]string
	// SpecPatches are settings chart 0.27 has no value for (the API server
	// load balancer's flavor and zone, control plane certificate renewal),
	// which the sidecar's Helm post-renderer writes into the objects.
	SpecPatches []SpecPatch
	// CertificatesExpiryDaysSet says a label or the site's default set
	// control_plane_certificates_expiry_days (SpecPatches hold it when it
	// is not 0); unset, the cluster's own default applies
	// (DefaultCertificatesExpiryDays).
	CertificatesExpiryDaysSet bool
	// APIEndpoint is the API server endpoint asked for, which cannot change
	// once the cluster exists.
	APIEndpoint APIEndpoint
}

// builder carries one Build: its input, the problems and warnings found so
// far, and the values being assembled.
type builder struct {
	in           Input
	cfg          Config
	p            problems
	warnings     []string
	seenWarnings map[string]bool

	mergedLabels map[string]string
	labels       *labelSet
	values       map[string]any

	release    string
	cni        string // "calico" or "cilium"
	osDistro   string
	podCIDR    string
	svcCIDR    string
	svcDomain  string
	nodeCIDR   string
	hasFixedNw bool

	proxyChecked *proxySettings // validated once, used by every kubeadm config

	machineAnnotations map[string]map[string]string // see Result
	specPatches        []SpecPatch                  // see Result
}

func (b *builder) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if b.seenWarnings[msg] {
		return
	}
	b.seenWarnings[msg] = true
	b.warnings = append(b.warnings, msg)
}

// Build turns Magnum's objects and the resolved OpenStack facts into values
// for the openstack-cluster chart. Everything is validated first: on any
// problem it returns no values and an error joining every problem found, each
// a *FieldError (the user's input) or a *ConfigError (the driver's
// configuration). The same input always gives the same values.
func Build(in Input, cfg Config) (Result, error) {
	b := &builder{in: in, cfg: cfg, values: map[string]any{}, seenWarnings: map[string]bool{}}
	validateConfig(cfg, &b.p)
	b.labels = b.resolveLabels()
	chartVersion := b.chartVersion()

	b.releaseName()
	b.machineImage()
	b.sshKey()
	b.networkDriver()
	b.kubeNetwork()
	b.clusterNetworking()
	b.securityGroupRules()
	b.apiServer()
	b.apiServerEndpoint()
	b.controlPlane()
	b.nodeGroups()
	b.kubeletArgs()
	b.controlPlaneSecurity()
	b.etcd()
	b.auth()
	b.addons()
	b.addonSwitches()
	b.storageClasses()
	b.registries()
	b.systemPlacement()

	if err := b.p.err(); err != nil {
		return Result{Warnings: b.warnings}, err
	}
	if path := findTemplateSyntax(b.values, ""); path != "" {
		return Result{Warnings: b.warnings}, fmt.Errorf("internal error: template delimiters reached values at %s", path)
	}
	values, _ := asValuesFile(b.values).(map[string]any)
	return Result{Values: values, ChartVersion: chartVersion, Warnings: b.warnings, ServerGroupPolicy: b.labels.str("server_group_policies"), MachineAnnotations: b.machineAnnotations, SpecPatches: b.specPatches,
		CertificatesExpiryDaysSet: b.labels.has("control_plane_certificates_expiry_days"), APIEndpoint: b.apiEndpoint()}, nil
}

// chartVersion is the template's capi_helm_chart_version label, else the
// configured default.
func (b *builder) chartVersion() string {
	version := b.labels.str("capi_helm_chart_version")
	if version == "" {
		version = b.cfg.DefaultChartVersion
	}
	if version == "" {
		b.p.config("chart.version", "", "no chart version: set chart.version or the template label capi_helm_chart_version")
		return ""
	}
	if v, ok := parseSemver(version); ok && (v.major != 0 || v.minor != 27) {
		b.warn("chart version %s: these values are written and checked for openstack-cluster %s; other releases may read different keys", version, ChartVersion)
	}
	return version
}

// releaseName checks the stack_id the cluster's objects are named after.
func (b *builder) releaseName() {
	id := b.in.Cluster.StackID
	switch {
	case id == "":
		b.p.field("cluster.stack_id", id, "the release name generated at create time (ReleaseName); it must be saved on the cluster before values are built")
	case len(id) > maxStackID || !isDNSLabel(id):
		b.p.field("cluster.stack_id", id, fmt.Sprintf("a release name as ReleaseName makes it: lowercase letters, digits and '-', at most %d characters", maxStackID))
	default:
		b.release = id
		put(b.values, id+"-cloud-credentials", "cloudCredentialsSecretName")
	}
}
