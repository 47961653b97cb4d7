package release

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/repo"

	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

func archivePath(version string) string { return "/" + chartName + "-" + version + ".tgz" }

// TestHTTPCacheAndOffline: the first load of a version downloads the index
// and the archive, later loads (in this process or the next one) download
// nothing, a cached version installs while the repository is down, and an
// uncached one fails naming the source, the version and what is cached.
func TestHTTPCacheAndOffline(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published()})
	ctx := context.Background()
	opts := CacheOptions{Dir: t.TempDir(), IndexTTL: time.Hour}
	src := Source{Repository: r.URL(), Name: chartName}

	first := newCharts(t, src, opts)
	for range 3 {
		ch, err := first.Load(ctx, v0)
		if err != nil {
			t.Fatalf("Load %s: %v", v0, err)
		}
		if ch.Metadata.Version != v0 || len(ch.Dependencies()) == 0 {
			t.Fatalf("loaded %s %s with %d subcharts", ch.Name(), ch.Metadata.Version, len(ch.Dependencies()))
		}
	}
	if got := []int{r.Requests("/index.yaml"), r.Requests(archivePath(v0))}; got[0] != 1 || got[1] != 1 {
		t.Errorf("three loads made index/archive requests %v, want [1 1]", got)
	}

	// A new process over the same cache directory.
	second := newCharts(t, src, opts)
	if _, err := second.Load(ctx, v0); err != nil {
		t.Fatal(err)
	}
	if got := r.Requests(archivePath(v0)); got != 1 {
		t.Errorf("a restarted loader downloaded the cached archive again (%d requests)", got)
	}

	if err := r.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	third := newCharts(t, src, opts)
	if _, err := third.Load(ctx, v0); err != nil {
		t.Fatalf("cached %s while the repository is offline: %v", v0, err)
	}
	_, err := third.Load(ctx, v1)
	e := wantError[*UnreachableError](t, err, r.URL(), v1, "cached versions: "+v0)
	if e.Version != v1 {
		t.Errorf("error version %q", e.Version)
	}

	if err := r.SetOnline(true); err != nil {
		t.Fatal(err)
	}
	if _, err := third.Load(ctx, v1); err != nil {
		t.Fatalf("%s once the repository is back: %v", v1, err)
	}
}

// TestHTTPTLSAndBasicAuth: a private CA and basic auth from the source; the
// password appears in no error.
func TestHTTPTLSAndBasicAuth(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published(), TLS: true, Username: "robot", Password: "s3cret-pw"})
	ctx := context.Background()
	tests := []struct {
		name    string
		src     Source
		wantErr string
	}{
		{"CA and credentials", Source{Repository: r.URL(), Name: chartName, CAFile: r.CAFile(), Username: "robot", Password: "s3cret-pw"}, ""},
		{"wrong password", Source{Repository: r.URL(), Name: chartName, CAFile: r.CAFile(), Username: "robot", Password: "nope"}, "401"},
		{"no CA", Source{Repository: r.URL(), Name: chartName, Username: "robot", Password: "s3cret-pw"}, "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCharts(t, tt.src, CacheOptions{Dir: t.TempDir()})
			_, err := c.Load(ctx, v0)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError[*UnreachableError](t, err, tt.wantErr, v0)
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "nope") {
				t.Errorf("the error quotes a password: %v", err)
			}
		})
	}
}

// TestHTTPIndexTTL: the index is downloaded again only once it is older
// than the TTL; a version missing from a younger index sends the loader
// back to the repository at most every minIndexRefresh.
func TestHTTPIndexTTL(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published()})
	ctx := context.Background()
	c := newCharts(t, Source{Repository: r.URL(), Name: chartName}, CacheOptions{Dir: t.TempDir(), IndexTTL: 10 * time.Minute})
	repoOf := c.from.(*httpRepo)
	clock := time.Now()
	repoOf.now = func() time.Time { return clock }

	if _, err := c.Load(ctx, v0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if got := r.Requests("/index.yaml"); got != 1 {
		t.Errorf("two versions within the TTL: %d index requests, want 1", got)
	}

	// Published after our index was fetched.
	if err := r.Publish(chartrepo.Chart{Dir: testchart.Dir(), Version: "0.27.2"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Load(ctx, "0.27.2")
	wantError[*ChartNotFoundError](t, err, "0.27.2", "versions 0.27.1, 0.27.0")
	if got := r.Requests("/index.yaml"); got != 1 {
		t.Errorf("a miss in a fresh index refetched it (%d requests)", got)
	}
	clock = clock.Add(minIndexRefresh + time.Second)
	if _, err := c.Load(ctx, "0.27.2"); err != nil {
		t.Fatalf("a version published since the index was fetched: %v", err)
	}
	if got := r.Requests("/index.yaml"); got != 2 {
		t.Errorf("index requests %d, want 2", got)
	}

	clock = clock.Add(11 * time.Minute)
	if _, err := c.Load(ctx, "0.27.3"); err == nil {
		t.Fatal("a version nobody published loaded")
	}
	if got := r.Requests("/index.yaml"); got != 3 {
		t.Errorf("after the TTL: %d index requests, want 3", got)
	}
}

// TestHTTPDigest: an archive on disk that no longer matches its digest is
// fetched again (or, offline, refused); a repository whose archive does not
// match its own index is refused and nothing is cached.
func TestHTTPDigest(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published()})
	ctx := context.Background()
	opts := CacheOptions{Dir: t.TempDir()}
	src := Source{Repository: r.URL(), Name: chartName}
	c := newCharts(t, src, opts)
	if _, err := c.Load(ctx, v0); err != nil {
		t.Fatal(err)
	}
	onDisk := c.cache.archivePath(v0)
	if err := os.WriteFile(onDisk, []byte("not a chart"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newCharts(t, src, opts).Load(ctx, v0); err != nil {
		t.Fatalf("load over a corrupted cache entry: %v", err)
	}
	if got := r.Requests(archivePath(v0)); got != 2 {
		t.Errorf("archive requests %d, want 2 (the corrupt copy replaced)", got)
	}

	if err := os.WriteFile(onDisk, []byte("not a chart"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	_, err := newCharts(t, src, opts).Load(ctx, v0)
	wantError[*UnreachableError](t, err, v0)
	if _, err := os.Stat(onDisk); !os.IsNotExist(err) {
		t.Errorf("the corrupt archive is still cached (%v)", err)
	}

	// A repository whose index promises another archive.
	dir := t.TempDir()
	path, _, _, err := chartrepo.Package(chartrepo.Chart{Dir: testchart.Dir()}, dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	idx, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	idx.Entries[chartName][0].Digest = strings.Repeat("ab", 32)
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := newCharts(t, Source{Repository: srv.URL, Name: chartName}, CacheOptions{Dir: t.TempDir()})
	_, err = bad.Load(ctx, v0)
	wantError[*BadChartError](t, err, "sha256", strings.Repeat("ab", 32), filepath.Base(path))
	if got := bad.cache.versions(); len(got) != 0 {
		t.Errorf("a rejected archive was cached: %v", got)
	}
}

// TestLoadReturnsAFreshChart: Helm removes disabled subcharts from the
// chart it installs; one install must not change the next one's chart.
func TestLoadReturnsAFreshChart(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published()})
	c := newCharts(t, Source{Repository: r.URL(), Name: chartName}, CacheOptions{Dir: t.TempDir()})
	first, err := c.Load(context.Background(), v0)
	if err != nil {
		t.Fatal(err)
	}
	first.SetDependencies()
	second, err := c.Load(context.Background(), v0)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Dependencies()) == 0 {
		t.Error("a change to one loaded chart shows in the next")
	}
}

// TestConcurrentLoadsFetchOnce: loads of one version at once download it
// once.
func TestConcurrentLoadsFetchOnce(t *testing.T) {
	r := startHTTP(t, chartrepo.HTTPOptions{Charts: published()})
	c := newCharts(t, Source{Repository: r.URL(), Name: chartName}, CacheOptions{Dir: t.TempDir()})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := c.Load(context.Background(), v0)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := r.Requests(archivePath(v0)); got != 1 {
		t.Errorf("8 concurrent loads: %d downloads, want 1", got)
	}
}

func TestVersionAndSourceChecks(t *testing.T) {
	c := newCharts(t, Source{Repository: "https://charts.example/r", Name: chartName}, CacheOptions{Dir: t.TempDir()})
	for _, v := range []string{"", "../../etc/passwd", "1.0/x", "0.27.0 ; rm"} {
		_, err := c.Load(context.Background(), v)
		wantError[*ChartNotFoundError](t, err)
	}
	tests := []struct{ repo, want string }{
		{"https://user:pw@charts.example/r/", "https://charts.example/r"},
		{"oci://registry.example/charts", "oci://registry.example/charts"},
		{"/srv/charts", "/srv/charts"},
	}
	for _, tt := range tests {
		got := Source{Repository: tt.repo}.String()
		if got != tt.want {
			t.Errorf("Source{%q}.String() = %q", tt.repo, got)
		}
	}
	if _, err := NewCharts(Source{Repository: "https://charts.example/r"}, CacheOptions{Dir: t.TempDir()}, quiet()); err == nil {
		t.Error("a repository source without a chart name was accepted")
	}
	if _, err := NewCharts(Source{Repository: "https://charts.example/r", Name: chartName, CAFile: "/nonexistent/ca.pem"}, CacheOptions{Dir: t.TempDir()}, quiet()); err == nil || !strings.Contains(err.Error(), "chart.caFile") {
		t.Errorf("a missing CA file: %v", err)
	}
}
