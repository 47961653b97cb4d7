package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// writeFile writes a configuration whose kubeconfig exists.
func writeFile(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "magnum-capi.yaml")
	body = strings.ReplaceAll(body, "KUBECONFIG", kubeconfig)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

const minimal = `
managementClusters:
  - name: default
    kubeconfig: KUBECONFIG
`

// TestLoadPrecedence: flags over environment over file over defaults, for
// options with and without a default.
func TestLoadPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags []string
		check func(t *testing.T, c Config)
	}{
		{name: "defaults", file: minimal, check: func(t *testing.T, c Config) {
			if c.Listen != "unix:///run/magnum-capi/magnum-capi.sock" || c.Log.Level != "info" || c.Timeouts.Lock != 30*time.Second || c.Helm.HistoryMax != 10 {
				t.Errorf("defaults not applied: %+v", c)
			}
		}},
		{name: "file over defaults", file: minimal + "log:\n  level: warn\nnamespacePrefix: capi\n", check: func(t *testing.T, c Config) {
			if c.Log.Level != "warn" || c.NamespacePrefix != "capi" {
				t.Errorf("log.level %q namespacePrefix %q", c.Log.Level, c.NamespacePrefix)
			}
		}},
		{name: "environment over file", file: minimal + "log:\n  level: warn\n",
			env: map[string]string{"MAGNUM_CAPI_LOG_LEVEL": "error", "MAGNUM_CAPI_TIMEOUTS_UPDATE": "3h"},
			check: func(t *testing.T, c Config) {
				if c.Log.Level != "error" || c.Timeouts.Update != 3*time.Hour {
					t.Errorf("log.level %q timeouts.update %s", c.Log.Level, c.Timeouts.Update)
				}
			}},
		{name: "environment sets options without a default", file: minimal,
			env: map[string]string{"MAGNUM_CAPI_SOCKETGROUP": "magnum", "MAGNUM_CAPI_CHART_USERNAME": "robot", "MAGNUM_CAPI_CHART_PASSWORD": "s3cret", "MAGNUM_CAPI_OPENSTACK_REGION": "RegionTwo"},
			check: func(t *testing.T, c Config) {
				if c.SocketGroup != "magnum" || c.Chart.Username != "robot" || c.Chart.Password != "s3cret" || c.OpenStack.Region != "RegionTwo" {
					t.Errorf("socketGroup %q chart.password set %v openstack.region %q", c.SocketGroup, c.Chart.Password != "", c.OpenStack.Region)
				}
			}},
		{name: "flags over environment", file: minimal + "listen: unix:///from/file.sock\n",
			env:   map[string]string{"MAGNUM_CAPI_LOG_LEVEL": "error", "MAGNUM_CAPI_LISTEN": "unix:///from/env.sock"},
			flags: []string{"--log-level", "debug", "--metrics-address", "127.0.0.1:19561"},
			check: func(t *testing.T, c Config) {
				if c.Log.Level != "debug" || c.MetricsAddress != "127.0.0.1:19561" || c.Listen != "unix:///from/env.sock" {
					t.Errorf("log.level %q metricsAddress %q listen %q", c.Log.Level, c.MetricsAddress, c.Listen)
				}
			}},
		{name: "application credential options: defaults, file, environment", file: minimal + "openstack:\n  applicationCredentialRoles: [member, reader]\n",
			env: map[string]string{"MAGNUM_CAPI_OPENSTACK_APPLICATIONCREDENTIALLIFETIME": "2160h"},
			check: func(t *testing.T, c Config) {
				o := c.OpenStack
				if strings.Join(o.ApplicationCredentialRoles, "|") != "member|reader" || o.ApplicationCredentialLifetime != 2160*time.Hour || o.ApplicationCredentialRenewBefore != 720*time.Hour {
					t.Errorf("roles %q lifetime %s renewBefore %s", o.ApplicationCredentialRoles, o.ApplicationCredentialLifetime, o.ApplicationCredentialRenewBefore)
				}
			}},
		{name: "application credential roles: the default list", file: minimal,
			check: func(t *testing.T, c Config) {
				if got := strings.Join(c.OpenStack.ApplicationCredentialRoles, "|"); got != "member|load-balancer_member" {
					t.Errorf("roles %q, want member|load-balancer_member", got)
				}
			}},
		{name: "application credential roles from the environment", file: minimal,
			env: map[string]string{"MAGNUM_CAPI_OPENSTACK_APPLICATIONCREDENTIALROLES": "member,load-balancer_observer"},
			check: func(t *testing.T, c Config) {
				if got := strings.Join(c.OpenStack.ApplicationCredentialRoles, "|"); got != "member|load-balancer_observer" {
					t.Errorf("roles %q", got)
				}
			}},
		{name: "flag for a nested option", file: minimal, flags: []string{"--chart-version=0.28.0", "--log-format", "text"},
			check: func(t *testing.T, c Config) {
				if c.Chart.Version != "0.28.0" || c.Log.Format != "text" {
					t.Errorf("chart.version %q log.format %q", c.Chart.Version, c.Log.Format)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			v := viper.New()
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			if err := BindFlags(fs, v); err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(tt.flags); err != nil {
				t.Fatal(err)
			}
			c, err := Load(writeFile(t, tt.file), v)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadRefusesUnknownOptions(t *testing.T) {
	_, err := Load(writeFile(t, minimal+"lsiten: unix:///typo.sock\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "lsiten") {
		t.Errorf("a misspelt option: %v, want an error naming lsiten", err)
	}
}

func TestFlagName(t *testing.T) {
	for key, want := range map[string]string{
		"listen": "listen", "log.level": "log-level", "metricsAddress": "metrics-address",
		"defaultManagementCluster": "default-management-cluster", "chart.version": "chart-version",
	} {
		if got := FlagName(key); got != want {
			t.Errorf("FlagName(%s) = %s, want %s", key, got, want)
		}
	}
}
