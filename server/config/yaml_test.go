package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/viper"
)

// TestDefaultDecodes: Default is Defaults decoded, e.g. durations as
// durations.
func TestDefaultDecodes(t *testing.T) {
	c := Default()
	if c.Listen != "unix:///run/magnum-capi/magnum-capi.sock" || c.Timeouts.Lock != 30*time.Second || c.Chart.IndexTTL != 10*time.Minute || c.GCPercent != 50 {
		t.Errorf("Default() = %+v", c)
	}
}

// TestYAMLRoundTrip: Load reads YAML(c) back as c, every option included
// (list entries, durations, booleans).
func TestYAMLRoundTrip(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	c.Listen = "unix://" + filepath.Join(dir, "s.sock")
	c.MetricsAddress, c.Pprof = "127.0.0.1:9999", true
	c.ManagementClusters = []ManagementCluster{{Name: "a", Kubeconfig: kubeconfig}, {Name: "b", Kubeconfig: kubeconfig, Context: "ctx", QPS: 2.5, Burst: 7, RequestTimeout: time.Minute}}
	c.DefaultManagementCluster = "b"
	c.Timeouts.Lock, c.OpenStack.Timeout = 7*time.Second, 3*time.Minute
	c.Values.StrictLabels = true
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte(testCA), 0o600); err != nil {
		t.Fatal(err)
	}
	// Registry hosts have dots, which viper splits map keys at: the
	// list form must come back whole.
	c.Values = Values{
		StrictLabels: true, LabelDefaults: map[string]string{"boot_volume_size": "30", "boot_volume_type": "ssd"},
		KeystoneAuthURL: "https://keystone.example.com:5000/v3", CSICinderDefaultVolumeType: "fast",
		RegistryMirrors:    []RegistryMirror{{Registry: "docker.io", Mirrors: []string{"https://mirror.example.com/v2/docker.io"}}},
		MirroredRegistries: []string{"docker.io", "quay.io"}, KeepChartRegistryMirrors: true,
		TrustedCAs: []TrustedCA{{Name: "site-root", File: ca}},
	}
	raw, err := YAML(c)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "magnum-capi.yaml")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(file, viper.New())
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("read back\n%+v\nwant\n%+v\nfrom\n%s", got, c, raw)
	}
}
