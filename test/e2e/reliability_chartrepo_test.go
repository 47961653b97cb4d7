package e2e

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// uncachedChartVersion is published to the repository by the offline test
// and never fetched by any sidecar.
const uncachedChartVersion = "0.27.5"

// TestReliabilityChartRepoOffline: with the chart repository down, a
// cluster whose template uses a cached chart version (the configured
// default, which the sidecar fetched at start) is created as usual; one
// whose template names a version the repository has but this sidecar never
// fetched is refused at once, FailedPrecondition naming the version, the
// repository and the versions that would work, and nothing of it is
// applied. FailedPrecondition rather than Unavailable: the sidecar is
// healthy and a retry cannot help until an operator brings the repository
// back (server/release.UnreachableError).
func TestReliabilityChartRepoOffline(t *testing.T) {
	dir := filepath.Join(testbed.TestdataDir(), "charts", "openstack-cluster")
	if err := stack.Charts.Publish(chartrepo.Chart{Dir: dir, Version: uncachedChartVersion}); err != nil {
		t.Fatal(err)
	}
	if err := stack.Charts.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	online := false
	defer func() {
		if !online {
			if err := stack.Charts.SetOnline(true); err != nil {
				t.Error(err)
			}
		}
	}()
	requests := stack.Charts.RequestCounts()

	cached := newCluster(t, "offline-cached", "v1.33.2", 1)
	stackID := cached.create(t, driver)
	cached.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	revs := history(t, stack.Env.Config, projectNamespace(), stackID)
	if len(revs) != 1 || revs[0].Chart.Metadata.Version != harness.ChartVersion {
		t.Errorf("release of the cached-chart cluster: %s, chart %v; want revision 1 of %s", statuses(revs), revs[0].Chart.Metadata.Version, harness.ChartVersion)
	}

	before := driverFootprint(t)
	uncached := newCluster(t, "offline-uncached", "v1.33.2", 1)
	uncached.spec.ClusterTemplate.Labels["capi_helm_chart_version"] = uncachedChartVersion
	ctx, cancel := callCtx()
	start := time.Now()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: uncached.ctx, Spec: uncached.spec, Certificates: uncached.certs, CreateTimeout: 60})
	cancel()
	s, _ := status.FromError(err)
	t.Logf("uncached version, repository offline: %s after %s: %s", s.Code(), time.Since(start).Round(time.Millisecond), s.Message())
	if s.Code() != codes.FailedPrecondition {
		t.Errorf("create with an uncached chart version while the repository is offline: %v, want FailedPrecondition", err)
	}
	for _, want := range []string{uncachedChartVersion, stack.Charts.URL(), harness.ChartVersion} {
		if !strings.Contains(s.Message(), want) {
			t.Errorf("the message %q does not name %q (the version, the repository, the cached versions)", s.Message(), want)
		}
	}
	if diff := before.changes(driverFootprint(t)); len(diff) > 0 {
		t.Errorf("the refused create changed the management clusters or Keystone:\n%s", strings.Join(diff, "\n"))
	}
	if after := stack.Charts.RequestCounts(); !maps.Equal(after, requests) {
		t.Errorf("requests reached the offline repository: %v, then %v", requests, after)
	}

	// Back online, the same request installs the version it asked for.
	if err := stack.Charts.SetOnline(true); err != nil {
		t.Fatal(err)
	}
	online = true
	uncachedID := uncached.create(t, driver)
	uncached.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	if revs := history(t, stack.Env.Config, projectNamespace(), uncachedID); len(revs) != 1 || revs[0].Chart.Metadata.Version != uncachedChartVersion {
		t.Errorf("release once the repository is back: %s; want revision 1 of chart %s", statuses(revs), uncachedChartVersion)
	}
	cached.remove(t, driver)
	uncached.remove(t, driver)
}
