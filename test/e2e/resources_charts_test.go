package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestChartSources: the same cluster lifecycle with the chart from each
// place an operator can keep it — an HTTPS chart repository that needs a
// password and a private CA, an OCI registry, and a local chart directory
// (air-gapped sites) — each through its own sidecar. The release records
// the chart and version that were asked for; a remote source serves the
// chart for the create, and the sidecar's cache answers the resize.
func TestChartSources(t *testing.T) {
	t.Parallel() // its own chart sources, sidecars and clusters; with the other parallel tests, after the sequential ones
	https, err := chartrepo.StartHTTP(chartrepo.HTTPOptions{Charts: harness.TestCharts(), TLS: true, Username: "magnum", Password: "s3cret-chart-pass"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = https.Close() })
	oci, err := chartrepo.StartOCI(chartrepo.OCIOptions{Charts: harness.TestCharts()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = oci.Close() })
	ociRef := oci.Ref(stack.Info.ChartName)

	for _, tc := range []struct {
		name   string
		chart  func(c *config.Chart)
		served func() int
	}{
		{"https-with-auth", func(c *config.Chart) {
			c.Repository, c.CAFile, c.Username, c.Password = https.URL(), https.CAFile(), "magnum", "s3cret-chart-pass"
		}, func() int { return countMatching(https.RequestCounts(), ".tgz") }},
		{"oci", func(c *config.Chart) {
			c.Repository, c.PlainHTTP = strings.TrimSuffix(ociRef, "/"+stack.Info.ChartName), true
		}, func() int { return countMatching(oci.RequestCounts(), "/blobs/") }},
		{"local", func(c *config.Chart) { c.Repository = testchart.Dir() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cacheDir := filepath.Join(t.TempDir(), "chart-cache")
			peer := startSidecar(t, harness.SidecarOptions{Name: "charts-" + tc.name, Configure: func(cfg *config.Config) {
				tc.chart(&cfg.Chart)
				cfg.Chart.CacheDir = cacheDir
			}})
			c := newCluster(t, "chart-"+tc.name, "v1.33.2", 1)
			stackID := c.create(t, peer.Driver)
			start := time.Now()
			c.waitOn(t, peer.Driver, "CREATE_COMPLETE", 3*time.Minute)
			t.Logf("%s: CREATE_COMPLETE after %s", tc.name, time.Since(start).Round(time.Millisecond))

			revs := history(t, stack.Env.Config, projectNamespace(), stackID)
			if len(revs) != 1 || revs[0].Chart == nil {
				t.Fatalf("release %s: %d revisions, want 1 with its chart", stackID, len(revs))
			}
			if md := revs[0].Chart.Metadata; md.Name != stack.Info.ChartName || md.Version != stack.Info.ChartVersion {
				t.Errorf("release chart %s-%s, want %s-%s", md.Name, md.Version, stack.Info.ChartName, stack.Info.ChartVersion)
			}
			served := 0
			if tc.served != nil {
				if served = tc.served(); served == 0 {
					t.Errorf("the source served no chart for the create")
				}
			}
			// A resize loads the chart again: from the cache, not the source.
			req := c.resizeRequest(2)
			ctx, cancel := callCtx()
			_, err := peer.Driver.ResizeCluster(ctx, req)
			cancel()
			if err != nil {
				t.Fatalf("ResizeCluster: %v", err)
			}
			c.waitOn(t, peer.Driver, "UPDATE_COMPLETE", 3*time.Minute)
			if tc.served != nil {
				if n := tc.served(); n != served {
					t.Errorf("the resize downloaded the chart again (%d chart requests, %d after the create), want it from the cache", n, served)
				}
			}
			c.remove(t, peer.Driver)
		})
	}
}

// countMatching sums the request counts of paths containing part.
func countMatching(counts map[string]int, part string) int {
	n := 0
	for path, c := range counts {
		if strings.Contains(path, part) {
			n += c
		}
	}
	return n
}
