package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// valid is a configuration that passes validation; each case breaks it.
func valid(t *testing.T) Config {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Config{
		Listen: "unix:///run/magnum-capi/magnum-capi.sock", MetricsAddress: "127.0.0.1:9561", GCPercent: 50,
		Log: Log{Level: "info", Format: "json"}, NamespacePrefix: "magnum",
		ManagementClusters: []ManagementCluster{{Name: "default", Kubeconfig: kubeconfig}},
		Chart:              Chart{Repository: "https://example.org/charts", Name: "openstack-cluster", Version: "0.27.0", CacheDir: "/var/cache/x", IndexTTL: time.Minute},
		Helm:               Helm{HistoryMax: 10, Timeout: time.Minute},
		OpenStack: OpenStack{Cloud: "magnum", Interface: "public", Timeout: time.Second,
			ApplicationCredentialRoles: DefaultApplicationCredentialRoles, ApplicationCredentialLifetime: 8760 * time.Hour, ApplicationCredentialRenewBefore: 720 * time.Hour},
		Timeouts: Timeouts{Update: time.Hour, Delete: time.Hour, DefaultCreate: time.Hour, AddonFailureGrace: time.Minute, Lock: time.Second},
	}
}

func TestValidate(t *testing.T) {
	if err := valid(t).Validate(); err != nil {
		t.Fatalf("the valid configuration: %v", err)
	}
	tests := []struct {
		name   string
		change func(c *Config)
		// want are the options the errors must name, in order, with a word
		// of what was expected.
		want []string
	}{
		{"unix socket without a path", func(c *Config) { c.Listen = "unix://" }, []string{`listen="unix://": a unix socket address needs a path`}},
		{"neither unix nor host:port", func(c *Config) { c.Listen = "/run/sock" }, []string{`listen="/run/sock": expected unix:///path or host:port`}},
		{"TCP without mutual TLS", func(c *Config) { c.Listen = "0.0.0.0:9560"; c.TLS.CertFile = "/x" }, []string{`listen="0.0.0.0:9560": a TCP listener requires mutual TLS`, `tls.certFile="/x": cannot be read`}},
		{"metrics address", func(c *Config) { c.MetricsAddress = "9561" }, []string{`metricsAddress="9561": expected host:port`}},
		{"gc percent", func(c *Config) { c.GCPercent = 0 }, []string{`gcPercent="0": expected 10-1000`}},
		{"profiles without a metrics server", func(c *Config) { c.MetricsAddress = ""; c.Pprof = true }, []string{`pprof="true": profiles are served on metricsAddress`}},
		{"log level and format", func(c *Config) { c.Log = Log{Level: "verbose", Format: "xml"} }, []string{`log.level="verbose": expected debug, info, warn or error`, `log.format="xml": expected json or text`}},
		{"namespace prefix", func(c *Config) { c.NamespacePrefix = "Magnum_" }, []string{`namespacePrefix="Magnum_": expected 1-30 characters of [a-z0-9-]`}},
		{"no management cluster", func(c *Config) { c.ManagementClusters = nil }, []string{`managementClusters="": configure at least one`}},
		{"management cluster entries", func(c *Config) {
			c.ManagementClusters = append(c.ManagementClusters, ManagementCluster{Name: "default", Kubeconfig: "/nonexistent/kubeconfig"}, ManagementCluster{})
		}, []string{
			`managementClusters[1].name="default": names must be unique`,
			`managementClusters[1].kubeconfig="/nonexistent/kubeconfig": cannot be read: no such file or directory`,
			`managementClusters[2].name="": every management cluster needs a name`,
			`managementClusters[2].kubeconfig="": the path of a kubeconfig file is required`,
		}},
		{"argocd options", func(c *Config) {
			c.ArgoCD = ArgoCD{Enabled: true, Namespace: "Argo_CD", Kubeconfig: "/nonexistent/argocd", Project: "Team A"}
		}, []string{
			`argocd.namespace="Argo_CD": expected a namespace name`,
			`argocd.kubeconfig="/nonexistent/argocd": cannot be read: no such file or directory`,
			`argocd.project="Team A": expected the name of an Argo CD AppProject`,
		}},
		{"argocd context without kubeconfig", func(c *Config) {
			c.ArgoCD = ArgoCD{Enabled: true, Namespace: "argocd", Context: "argo", Project: "magnum"}
		}, []string{`argocd.context="argo": a context is read from argocd.kubeconfig`}},
		{"argocd without a project", func(c *Config) { c.ArgoCD = ArgoCD{Enabled: true, Namespace: "argocd"} }, []string{
			`argocd.project="": required when argocd.enabled is true: the name of the Argo CD AppProject the clusters are scoped to`,
		}},
		{"unknown default management cluster", func(c *Config) { c.DefaultManagementCluster = "west" }, []string{`defaultManagementCluster="west": is not the name of a configured management cluster`}},
		{"chart source", func(c *Config) { c.Chart.Repository, c.Chart.Name, c.Chart.CacheDir = "", "", "" }, []string{
			`chart.name="": required for a repository or registry source`, `chart.repository="": an https:// repository`, `chart.cacheDir="": a writable directory is required`,
		}},
		{"helm history", func(c *Config) { c.Helm.HistoryMax = 0 }, []string{`helm.historyMax="0": expected at least 1`}},
		{"durations", func(c *Config) { c.Timeouts.Lock, c.OpenStack.Timeout = 0, -time.Second }, []string{
			`timeouts.lock="0s": expected a positive duration`, `openstack.timeout="-1s": expected a positive duration`,
		}},
		{"management cluster client limits", func(c *Config) {
			c.ManagementClusters[0].QPS, c.ManagementClusters[0].Burst, c.ManagementClusters[0].RequestTimeout = -1, -2, -time.Second
		}, []string{
			`managementClusters[0].qps="-1": expected requests per second above 0`,
			`managementClusters[0].burst="-2": expected a number of requests above 0`,
			`managementClusters[0].requestTimeout="-1s": expected a positive duration`,
		}},
		{"credential roles: none", func(c *Config) { c.OpenStack.ApplicationCredentialRoles = nil }, []string{
			`openstack.applicationCredentialRoles="": expected role names`,
		}},
		{"credential roles: * with others", func(c *Config) { c.OpenStack.ApplicationCredentialRoles = []string{"*", "member"} }, []string{
			`openstack.applicationCredentialRoles="*,member": expected role names, or "*" alone`,
		}},
		{"credential roles: an empty name", func(c *Config) { c.OpenStack.ApplicationCredentialRoles = []string{"member", ""} }, []string{
			`openstack.applicationCredentialRoles="member,": expected role names`,
		}},
		{"credential lifetime negative", func(c *Config) { c.OpenStack.ApplicationCredentialLifetime = -time.Hour }, []string{
			`openstack.applicationCredentialLifetime="-1h0m0s": expected a duration`,
		}},
		{"credential renewed before it is made", func(c *Config) { c.OpenStack.ApplicationCredentialRenewBefore = 8760 * time.Hour }, []string{
			`openstack.applicationCredentialRenewBefore="8760h0m0s": expected a duration below openstack.applicationCredentialLifetime`,
		}},
		{"credential renewal negative", func(c *Config) { c.OpenStack.ApplicationCredentialRenewBefore = -time.Second }, []string{
			`openstack.applicationCredentialRenewBefore="-1s": expected a duration below`,
		}},
		{"namespace cluster role", func(c *Config) { c.ManagementClusters[0].NamespaceClusterRole = "rbac/magnum" }, []string{
			`managementClusters[0].namespaceClusterRole="rbac/magnum": expected the name of a ClusterRole`,
		}},
		{"label defaults", func(c *Config) {
			c.Values.LabelDefaults = map[string]string{"boot_volume_size": "30GB", "bogus_label": "x", "capi_helm_chart_version": "0.27.0"}
		}, []string{
			`values.labelDefaults.boot_volume_size="30GB": expected`,
			`values.labelDefaults.bogus_label="x": not a label this driver reads`,
			`values.labelDefaults.capi_helm_chart_version="0.27.0": this label is read from the cluster template only; set chart.version instead`,
		}},
		{"keystone auth URL and CSI volume type", func(c *Config) {
			c.Values.KeystoneAuthURL, c.Values.CSICinderDefaultVolumeType = "keystone:5000", "fast # ssd"
		}, []string{`values.keystoneAuthURL="keystone:5000": expected`, `values.csiCinderDefaultVolumeType="fast # ssd": expected`}},
		{"registry mirrors", func(c *Config) {
			c.Values.RegistryMirrors = []RegistryMirror{
				{Registry: "ghcr.io", Mirrors: []string{"ftp://mirror"}}, {Registry: "docker.io", Mirrors: []string{"https://m/v2/d"}},
				{Registry: "docker.io", Mirrors: []string{"https://m/v2/d"}}, {Registry: "https://quay.io"}}
			c.Values.MirroredRegistries = []string{"ghcr.io/x y"}
		}, []string{
			`values.registryMirrors[2].registry="docker.io": each registry is listed once`,
			`values.registryMirrors[3].mirrors="": at least one mirror URL`,
			`values.registryMirrors="https://quay.io": expected a registry host`,
			`values.registryMirrors.ghcr.io="ftp://mirror": expected`,
			`values.mirroredRegistries="ghcr.io/x y": expected a registry host`,
		}},
		{"trusted CAs", func(c *Config) {
			c.Values.TrustedCAs = []TrustedCA{{Name: "site", File: "/nonexistent/ca.pem"}, {Name: "Bad Name", File: c.ManagementClusters[0].Kubeconfig}}
		}, []string{
			`values.trustedCAs[0].file="/nonexistent/ca.pem": cannot be read: no such file or directory`,
			`values.trustedCAs="Bad Name": expected a lowercase name`,
			`values.trustedCAs.Bad Name=`, // the kubeconfig is no PEM
			`values.trustedCAs.site=`,     // unreadable, so empty
		}},
		{"flavor minimums", func(c *Config) { c.OpenStack.MinFlavorRAMMiB, c.OpenStack.MinFlavorVCPUs = -1, -2 }, []string{
			`openstack.minFlavorRAMMiB="-1": expected MiB of RAM, 0 or more`, `openstack.minFlavorVCPUs="-2": expected a number of vCPUs, 0 or more`,
		}},
		{"unreadable files", func(c *Config) {
			c.OpenStack.CloudsFile, c.Chart.CAFile = "/nonexistent/clouds.yaml", "/nonexistent/ca.pem"
		}, []string{
			`openstack.cloudsFile="/nonexistent/clouds.yaml": cannot be read`, `chart.caFile="/nonexistent/ca.pem": cannot be read`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid(t)
			tt.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), "configuration option "+want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
			// Every problem is an OptionError naming its option.
			var joined interface{ Unwrap() []error }
			if errors.As(err, &joined) {
				for _, e := range joined.Unwrap() {
					var oe *OptionError
					if !errors.As(e, &oe) || oe.Option == "" {
						t.Errorf("%v is not an OptionError naming its option", e)
					}
				}
				if n := len(joined.Unwrap()); n != len(tt.want) {
					t.Errorf("%d problems reported, want %d:\n%v", n, len(tt.want), err)
				}
			}
		})
	}
}

// TestCredentialRoles: "*" alone hands the adapter no list (every role of
// the user's token); any other list is passed as is.
func TestCredentialRoles(t *testing.T) {
	for _, tt := range []struct {
		roles, want []string
	}{
		{[]string{"*"}, nil},
		{DefaultApplicationCredentialRoles, DefaultApplicationCredentialRoles},
		{[]string{"member"}, []string{"member"}},
	} {
		if got := (OpenStack{ApplicationCredentialRoles: tt.roles}).CredentialRoles(); strings.Join(got, ",") != strings.Join(tt.want, ",") || (tt.want == nil) != (got == nil) {
			t.Errorf("CredentialRoles(%q) = %q, want %q", tt.roles, got, tt.want)
		}
	}
}

// TestValidateArgoCDDisabled: a disabled hand-off's options are never read,
// so they are not checked either.
func TestValidateArgoCDDisabled(t *testing.T) {
	c := valid(t)
	c.ArgoCD = ArgoCD{Namespace: "Not_A_Namespace", Kubeconfig: "/nonexistent"}
	if err := c.Validate(); err != nil {
		t.Fatalf("a disabled argocd section was checked: %v", err)
	}
}
