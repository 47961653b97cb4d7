package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// siteCA is what a site's trusted CA file holds, as far as the values
// mapping checks it (it is written to nodes, not parsed).
const siteCA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUsite\n-----END CERTIFICATE-----\n"

// TestSiteSettingsReachValues: the site settings of docs/configuration.md
// (values.*), written into the sidecar's file and read by the binary as
// deploy/ starts it, reach the values RenderValues answers: label defaults
// below the template's labels, the Keystone auth webhook URL (so
// keystone_auth_enabled=true works), registry mirrors and trusted CAs read
// from their file. The stack's own sidecar, without a keystoneAuthURL,
// refuses keystone_auth_enabled naming the option.
func TestSiteSettingsReachValues(t *testing.T) {
	bin, err := stack.SidecarBinary()
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "site-root.pem")
	if err := os.WriteFile(ca, []byte(siteCA), 0o600); err != nil {
		t.Fatal(err)
	}
	const keystoneURL = "https://keystone.site.example:5000/v3"
	sc := startSidecar(t, harness.SidecarOptions{Name: "site", Binary: bin, Configure: func(c *config.Config) {
		c.Values.LabelDefaults = map[string]string{"boot_volume_size": "42", "auto_healing_enabled": "false"}
		c.Values.KeystoneAuthURL = keystoneURL
		c.Values.RegistryMirrors = []config.RegistryMirror{{Registry: "docker.io", Mirrors: []string{"https://mirror.site.example/v2/docker.io"}}}
		c.Values.TrustedCAs = []config.TrustedCA{{Name: "site-root", File: ca}}
	}})
	c := newCluster(t, "site-settings", "v1.33.2", 1)
	c.spec.Cluster.Labels["keystone_auth_enabled"] = "true"
	// What create would have saved on the cluster (RenderValues previews a
	// cluster Magnum stored; this one is never created).
	c.spec.Cluster.StackId = helmvalues.ReleaseName(c.spec.Cluster.Name, c.spec.Cluster.Uuid)

	tests := []struct {
		name           string
		templateLabels map[string]string
		want           map[string]any // dotted path in the values -> value
	}{
		{"site defaults", nil, map[string]any{
			"controlPlane.machineRootVolume.diskSize":                  float64(42),
			"addons.openstack.k8sKeystoneAuth.enabled":                 true,
			"addons.openstack.k8sKeystoneAuth.values.openstackAuthUrl": keystoneURL,
			"registryMirrors.docker\x00io":                             []any{"https://mirror.site.example/v2/docker.io"},
			"trustedCAs.site-root":                                     siteCA,
		}},
		{"a template label wins over the site default", map[string]string{"boot_volume_size": "20"}, map[string]any{
			"controlPlane.machineRootVolume.diskSize": float64(20),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.spec.ClusterTemplate.Labels = tt.templateLabels
			ctx, cancel := callCtx()
			defer cancel()
			resp, err := sc.Driver.RenderValues(ctx, &pb.RenderValuesRequest{Context: c.ctx, Spec: c.spec})
			if err != nil {
				t.Fatalf("RenderValues: %v", err)
			}
			var values map[string]any
			if err := yaml.Unmarshal([]byte(resp.GetValuesYaml()), &values); err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				got := lookupPath(values, path)
				if yamlOf(t, got) != yamlOf(t, want) {
					t.Errorf("%s = %v, want %v", strings.ReplaceAll(path, "\x00", "."), got, want)
				}
			}
		})
	}

	t.Run("the stack's sidecar has no keystoneAuthURL", func(t *testing.T) {
		c.spec.ClusterTemplate.Labels = nil
		ctx, cancel := callCtx()
		defer cancel()
		_, err := driver.RenderValues(ctx, &pb.RenderValuesRequest{Context: c.ctx, Spec: c.spec})
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "values.keystoneAuthURL") {
			t.Errorf("RenderValues with keystone_auth_enabled and no values.keystoneAuthURL: %v, want FailedPrecondition naming the option", err)
		}
	})
}

// lookupPath walks values along a dotted path; a NUL stands for a dot inside
// a key (docker.io).
func lookupPath(values map[string]any, path string) any {
	var cur any = values
	for _, key := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[strings.ReplaceAll(key, "\x00", ".")]
	}
	return cur
}

func yamlOf(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestSiteFlavorMinimums: openstack.minFlavorRAMMiB and minFlavorVCPUs
// refuse a cluster whose flavors (the recorded Nova's m1.medium) are
// smaller, with InvalidArgument naming the node group's flavor.
func TestSiteFlavorMinimums(t *testing.T) {
	tests := []struct {
		name      string
		ram, cpus int
		want      string
	}{
		{"RAM", 1 << 30, 0, "MiB of RAM, at least 1073741824 MiB are needed"},
		{"vCPUs", 0, 1000, "vCPUs, at least 1000 are needed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := startSidecar(t, harness.SidecarOptions{Name: "flavors-" + tt.name, Configure: func(c *config.Config) {
				c.OpenStack.MinFlavorRAMMiB, c.OpenStack.MinFlavorVCPUs = tt.ram, tt.cpus
			}})
			c := newCluster(t, "small-flavors", "v1.33.2", 1)
			c.spec.Cluster.StackId = helmvalues.ReleaseName(c.spec.Cluster.Name, c.spec.Cluster.Uuid)
			ctx, cancel := callCtx()
			defer cancel()
			_, err := sc.Driver.RenderValues(ctx, &pb.RenderValuesRequest{Context: c.ctx, Spec: c.spec})
			msg := status.Convert(err).Message()
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "flavor_id") {
				t.Errorf("RenderValues: %v; want InvalidArgument naming the flavor and %q", err, tt.want)
			}
		})
	}
}
