package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OptionError names the option that is wrong and why. serve exits 2 on one
// (the unit does not restart it: restarting cannot fix the configuration).
type OptionError struct {
	Option, Value, Problem string
	// Err is the cause, when the problem showed while assembling the
	// sidecar (server.New) rather than in Validate.
	Err error
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("configuration option %s=%q: %s", e.Option, e.Value, e.Problem)
}

func (e *OptionError) Unwrap() error { return e.Err }

// Problem is an OptionError for a cause found while assembling the sidecar
// from option (with its value).
func Problem(option, value string, err error) error {
	return &OptionError{Option: option, Value: value, Problem: err.Error(), Err: err}
}

// problems collects what is wrong with a configuration.
type problems []error

func (p *problems) bad(option, value, problem string) {
	*p = append(*p, &OptionError{Option: option, Value: value, Problem: problem})
}

// Validate checks every option; all problems are reported together.
func (c Config) Validate() error {
	var p problems
	c.validateServing(p.bad)
	c.validateFiles(p.bad)
	c.validateManagementClusters(p.bad)
	c.validateChart(p.bad)
	c.validateDurations(p.bad)
	c.validateValues(p.bad)
	if c.OpenStack.MinFlavorRAMMiB < 0 {
		p.bad("openstack.minFlavorRAMMiB", fmt.Sprint(c.OpenStack.MinFlavorRAMMiB), "expected MiB of RAM, 0 or more (0: no minimum)")
	}
	if c.OpenStack.MinFlavorVCPUs < 0 {
		p.bad("openstack.minFlavorVCPUs", fmt.Sprint(c.OpenStack.MinFlavorVCPUs), "expected a number of vCPUs, 0 or more (0: no minimum)")
	}
	c.OpenStack.validateCredentials(p.bad)
	c.ArgoCD.validate(p.bad)
	return errors.Join(p...)
}

// validateCredentials checks the clusters' application credential options.
func (o OpenStack) validateCredentials(bad func(option, value, problem string)) {
	roles := o.ApplicationCredentialRoles
	if len(roles) == 0 || (slices.Contains(roles, "*") && len(roles) > 1) || slices.Contains(roles, "") {
		bad("openstack.applicationCredentialRoles", strings.Join(roles, ","), `expected role names, or "*" alone for every role of the user's token`)
	}
	life, before := o.ApplicationCredentialLifetime, o.ApplicationCredentialRenewBefore
	if life < 0 {
		bad("openstack.applicationCredentialLifetime", life.String(), "expected a duration such as 8760h, or 0 for credentials that never expire")
	}
	if before < 0 || (life > 0 && before >= life) {
		bad("openstack.applicationCredentialRenewBefore", before.String(), "expected a duration below openstack.applicationCredentialLifetime ("+life.String()+")")
	}
}

// validateServing checks how the sidecar serves: its listener, metrics,
// garbage collection and logs.
func (c Config) validateServing(bad func(option, value, problem string)) {
	switch {
	case strings.HasPrefix(c.Listen, "unix://"):
		if strings.TrimPrefix(c.Listen, "unix://") == "" {
			bad("listen", c.Listen, "a unix socket address needs a path: unix:///run/magnum-capi/magnum-capi.sock")
		}
	default:
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			bad("listen", c.Listen, "expected unix:///path or host:port")
		} else if c.TLS.CertFile == "" || c.TLS.KeyFile == "" || c.TLS.ClientCAFile == "" {
			bad("listen", c.Listen, "a TCP listener requires mutual TLS: set tls.certFile, tls.keyFile and tls.clientCAFile")
		}
	}
	if c.MetricsAddress != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddress); err != nil {
			bad("metricsAddress", c.MetricsAddress, "expected host:port")
		}
	} else if c.Pprof {
		bad("pprof", "true", "profiles are served on metricsAddress: set it too")
	}
	if c.GCPercent < 10 || c.GCPercent > 1000 {
		bad("gcPercent", strconv.Itoa(c.GCPercent), "expected 10-1000 (percent of the live heap the heap may grow by before a collection)")
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", c.Log.Level, "expected debug, info, warn or error")
	}
	switch c.Log.Format {
	case "json", "text":
	default:
		bad("log.format", c.Log.Format, "expected json or text")
	}
	if c.Log.File != "" && !filepath.IsAbs(c.Log.File) {
		bad("log.file", c.Log.File, "expected an absolute path (empty: standard error)")
	}
}

// validateFiles checks that the files the options name can be read.
func (c Config) validateFiles(bad func(option, value, problem string)) {
	for _, f := range []struct{ option, path string }{{"tls.certFile", c.TLS.CertFile}, {"tls.keyFile", c.TLS.KeyFile}, {"tls.clientCAFile", c.TLS.ClientCAFile}, {"openstack.cloudsFile", c.OpenStack.CloudsFile}, {"openstack.caFile", c.OpenStack.CAFile}, {"chart.caFile", c.Chart.CAFile}} {
		if f.path != "" {
			if _, err := os.Stat(f.path); err != nil {
				bad(f.option, f.path, "cannot be read: "+errors.Unwrap(err).Error())
			}
		}
	}
}

// validateManagementClusters checks where clusters are placed: the
// namespace prefix and the management clusters, named uniquely.
func (c Config) validateManagementClusters(bad func(option, value, problem string)) {
	if c.NamespacePrefix == "" || len(c.NamespacePrefix) > 30 || strings.Trim(c.NamespacePrefix, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		bad("namespacePrefix", c.NamespacePrefix, "expected 1-30 characters of [a-z0-9-] (namespaces are <prefix>-<project id>, at most 63)")
	}
	if len(c.ManagementClusters) == 0 {
		bad("managementClusters", "", "configure at least one management cluster (name, kubeconfig)")
	}
	names := map[string]bool{}
	for i, mc := range c.ManagementClusters {
		opt := fmt.Sprintf("managementClusters[%d]", i)
		if mc.Name == "" {
			bad(opt+".name", "", "every management cluster needs a name")
		}
		if names[mc.Name] {
			bad(opt+".name", mc.Name, "names must be unique")
		}
		names[mc.Name] = true
		mc.validateClient(opt, bad)
		if mc.Kubeconfig == "" {
			bad(opt+".kubeconfig", "", "the path of a kubeconfig file is required")
		} else if _, err := os.Stat(mc.Kubeconfig); err != nil {
			bad(opt+".kubeconfig", mc.Kubeconfig, "cannot be read: "+errors.Unwrap(err).Error())
		}
	}
	if c.DefaultManagementCluster != "" && !names[c.DefaultManagementCluster] {
		bad("defaultManagementCluster", c.DefaultManagementCluster, "is not the name of a configured management cluster")
	}
}

// validateClient checks the client limits of one management cluster
// (option opt): zero means the default, anything else must be positive.
func (mc ManagementCluster) validateClient(opt string, bad func(option, value, problem string)) {
	if mc.QPS < 0 {
		bad(opt+".qps", fmt.Sprint(mc.QPS), fmt.Sprintf("expected requests per second above 0 (0: the default, %d)", DefaultQPS))
	}
	if mc.Burst < 0 {
		bad(opt+".burst", fmt.Sprint(mc.Burst), fmt.Sprintf("expected a number of requests above 0 (0: the default, %d)", DefaultBurst))
	}
	if mc.RequestTimeout < 0 {
		bad(opt+".requestTimeout", mc.RequestTimeout.String(), "expected a positive duration such as 30s (0: the default, "+DefaultRequestTimeout.String()+")")
	}
	if r := mc.NamespaceClusterRole; strings.ContainsAny(r, "/%") || r == "." || r == ".." {
		bad(opt+".namespaceClusterRole", r, "expected the name of a ClusterRole (no '/' or '%'; empty: the default, "+DefaultNamespaceClusterRole+")")
	}
}

// validateChart checks the chart source and Helm's history bound.
func (c Config) validateChart(bad func(option, value, problem string)) {
	if c.Chart.Name == "" && !strings.HasPrefix(c.Chart.Repository, "/") {
		bad("chart.name", c.Chart.Name, "required for a repository or registry source")
	}
	if c.Chart.Repository == "" {
		bad("chart.repository", "", "an https:// repository, an oci:// registry or a local chart path is required")
	}
	if c.Chart.CacheDir == "" {
		bad("chart.cacheDir", "", "a writable directory is required")
	}
	c.validateChartSource(bad)
	if c.Helm.HistoryMax < 1 {
		bad("helm.historyMax", fmt.Sprint(c.Helm.HistoryMax), "expected at least 1")
	}
}

// validateDurations checks that every timeout and TTL is positive.
func (c Config) validateDurations(bad func(option, value, problem string)) {
	for _, d := range []struct {
		option string
		v      interface{ Seconds() float64 }
	}{{"helm.timeout", c.Helm.Timeout}, {"timeouts.update", c.Timeouts.Update}, {"timeouts.delete", c.Timeouts.Delete}, {"timeouts.defaultCreate", c.Timeouts.DefaultCreate}, {"timeouts.addonFailureGrace", c.Timeouts.AddonFailureGrace}, {"timeouts.lock", c.Timeouts.Lock}, {"openstack.timeout", c.OpenStack.Timeout}, {"chart.indexTTL", c.Chart.IndexTTL}} {
		if d.v.Seconds() <= 0 {
			bad(d.option, fmt.Sprint(d.v), "expected a positive duration such as 30s or 10m")
		}
	}
}
