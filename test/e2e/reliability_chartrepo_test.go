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
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// uncachedChartVersion is a version the test's repository has and its
// sidecar never fetched.
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
//
// The repository and the sidecar are the test's own: taking the stack's
// repository down would change what other tests see, and the sidecar must
// have read an index that lists the uncached version.
func TestReliabilityChartRepoOffline(t *testing.T) {
	dir := filepath.Join(testbed.TestdataDir(), "charts", "openstack-cluster")
	repo, err := chartrepo.StartHTTP(chartrepo.HTTPOptions{Charts: append(harness.TestCharts(), chartrepo.Chart{Dir: dir, Version: uncachedChartVersion})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Close() })
	cacheDir := t.TempDir()
	sc := startSidecar(t, harness.SidecarOptions{Name: "offline", Configure: func(c *config.Config) {
		c.Chart.Repository, c.Chart.CacheDir = repo.URL(), cacheDir
	}})
	waitForCachedChart(t, cacheDir, harness.ChartVersion)
	if err := repo.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	requests := repo.RequestCounts()

	cached := newCluster(t, "offline-cached", "v1.33.2", 1)
	stackID := cached.create(t, sc.Driver)
	cached.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)
	revs := history(t, stack.Env.Config, projectNamespace(), stackID)
	if len(revs) != 1 || revs[0].Chart.Metadata.Version != harness.ChartVersion {
		t.Errorf("release of the cached-chart cluster: %s; want revision 1 of %s", statuses(revs), harness.ChartVersion)
	}

	uncached := newCluster(t, "offline-uncached", "v1.33.2", 1)
	uncached.spec.ClusterTemplate.Labels["capi_helm_chart_version"] = uncachedChartVersion
	before := footprintOf(t, uncached.owner())
	ctx, cancel := callCtx()
	start := time.Now()
	_, err = sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: uncached.ctx, Spec: uncached.spec, Certificates: uncached.certs})
	cancel()
	s, _ := status.FromError(err)
	t.Logf("uncached version, repository offline: %s after %s: %s", s.Code(), time.Since(start).Round(time.Millisecond), s.Message())
	if s.Code() != codes.FailedPrecondition {
		t.Errorf("create with an uncached chart version while the repository is offline: %v, want FailedPrecondition", err)
	}
	for _, want := range []string{uncachedChartVersion, harness.ChartVersion} {
		if !strings.Contains(s.Message(), want) {
			t.Errorf("the message %q does not name %q (the version asked for, the cached versions)", s.Message(), want)
		}
	}
	// The tenant reads the message; the repository's address is the
	// operator's (logged with the request id).
	if strings.Contains(s.Message(), repo.URL()) || strings.Contains(s.Message(), "127.0.0.1") {
		t.Errorf("the message %q shows the tenant the repository's address", s.Message())
	}
	if diff := before.changes(footprintOf(t, uncached.owner())); len(diff) > 0 {
		t.Errorf("the refused create changed the management clusters or Keystone:\n%s", strings.Join(diff, "\n"))
	}
	if after := repo.RequestCounts(); !maps.Equal(after, requests) {
		t.Errorf("requests reached the offline repository: %v, then %v", requests, after)
	}

	// Back online, the same request installs the version it asked for.
	if err := repo.SetOnline(true); err != nil {
		t.Fatal(err)
	}
	uncachedID := uncached.create(t, sc.Driver)
	uncached.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)
	if revs := history(t, stack.Env.Config, projectNamespace(), uncachedID); len(revs) != 1 || revs[0].Chart.Metadata.Version != uncachedChartVersion {
		t.Errorf("release once the repository is back: %s; want revision 1 of chart %s", statuses(revs), uncachedChartVersion)
	}
	cached.remove(t, sc.Driver)
	uncached.remove(t, sc.Driver)
}

// waitForCachedChart waits until a sidecar using cacheDir has the chart
// version on disk (it fetches the configured default at start).
func waitForCachedChart(t *testing.T, cacheDir, version string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if found, _ := filepath.Glob(filepath.Join(cacheDir, "*", harness.ChartName+"-"+version+".tgz.sha256")); len(found) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sidecar did not cache chart %s in %s within a minute", version, cacheDir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
