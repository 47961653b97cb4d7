package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// testCA is PEM as far as the values mapping checks (it is written to nodes,
// not parsed by the sidecar).
const testCA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"

// TestValuesConfig: every values.* option (and chart.version) reaches the
// mapping's configuration, trusted CAs read from their files.
func TestValuesConfig(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte(testCA), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values Values
		want   func(v *helmvalues.Config)
	}{
		{"nothing set: the mapping's defaults", Values{}, func(*helmvalues.Config) {}},
		{"every option", Values{
			StrictLabels: true, LabelDefaults: map[string]string{"boot_volume_type": "ssd"},
			KeystoneAuthURL: "https://keystone.example.com/v3", CSICinderDefaultVolumeType: "fast",
			RegistryMirrors:    []RegistryMirror{{Registry: "docker.io", Mirrors: []string{"https://m.example.com/v2/docker.io"}}},
			MirroredRegistries: []string{"quay.io"}, KeepChartRegistryMirrors: true,
			TrustedCAs:    []TrustedCA{{Name: "site", File: ca}},
			GPUPCIAliases: []string{"a100"}, GPUResourceName: "amd.com/gpu", CSICinderAllowedTopologies: []string{"az-1", "az-2"},
		}, func(v *helmvalues.Config) {
			v.StrictLabels, v.LabelDefaults = true, map[string]string{"boot_volume_type": "ssd"}
			v.KeystoneAuthURL, v.CSICinderDefaultVolumeType = "https://keystone.example.com/v3", "fast"
			v.RegistryMirrors = map[string][]string{"docker.io": {"https://m.example.com/v2/docker.io"}}
			v.MirroredRegistries, v.KeepChartRegistryMirrors = []string{"quay.io"}, true
			v.TrustedCAs = map[string]string{"site": testCA}
			v.GPUPCIAliases, v.GPUResourceName = []string{"a100"}, "amd.com/gpu"
			v.CSICinderAllowedTopologies = []string{"az-1", "az-2"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Chart.Version = "0.26.1"
			c.Values = tt.values
			got, err := c.ValuesConfig()
			if err != nil {
				t.Fatal(err)
			}
			want := helmvalues.DefaultConfig()
			want.DefaultChartVersion = "0.26.1"
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestLoadValues: render --config reads a sidecar's file (without needing
// its management clusters) and reports bad values.* options by name.
func TestLoadValues(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
		want                func(v helmvalues.Config) bool
	}{
		{"a sidecar's file", minimal + "chart:\n  version: 0.26.1\nvalues:\n  labelDefaults:\n    boot_volume_size: \"30\"\n  keystoneAuthURL: https://k.example.com/v3\n", "",
			func(v helmvalues.Config) bool {
				return v.DefaultChartVersion == "0.26.1" && v.LabelDefaults["boot_volume_size"] == "30" && v.KeystoneAuthURL == "https://k.example.com/v3"
			}},
		{"no management cluster needed", "values:\n  strictLabels: true\n", "", func(v helmvalues.Config) bool { return v.StrictLabels }},
		{"bad site default", "values:\n  labelDefaults:\n    auto_healing_enabled: maybe\n", `configuration option values.labelDefaults.auto_healing_enabled="maybe": expected`, nil},
		{"an old name", "keystone_auth_url: https://k.example.com/v3\n", `invalid keys: keystone_auth_url`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadValues(writeFile(t, tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(got) {
				t.Errorf("got %+v", got)
			}
		})
	}
}

// TestValuesFromEnvironment: the scalar and list values.* options have
// environment variables, as docs/configuration.md says (a list is
// comma-separated).
func TestValuesFromEnvironment(t *testing.T) {
	t.Setenv("MAGNUM_CAPI_VALUES_MIRROREDREGISTRIES", "docker.io,quay.io")
	t.Setenv("MAGNUM_CAPI_VALUES_KEYSTONEAUTHURL", "https://k.example.com/v3")
	t.Setenv("MAGNUM_CAPI_VALUES_KEEPCHARTREGISTRYMIRRORS", "true")
	got, err := LoadValues(writeFile(t, minimal))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.MirroredRegistries, []string{"docker.io", "quay.io"}) || got.KeystoneAuthURL != "https://k.example.com/v3" || !got.KeepChartRegistryMirrors {
		t.Errorf("got %+v", got)
	}
}
