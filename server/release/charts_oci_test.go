package release

import (
	"context"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/chartrepo"
)

// TestOCICacheAndOffline: an oci:// chart is pulled once, verified against
// its manifest's layer digest, and installs from the cache while the
// registry is down; an uncached version then fails naming source and
// version, and a tag the registry lacks is "not found", not "unreachable".
func TestOCICacheAndOffline(t *testing.T) {
	r := startOCI(t, chartrepo.OCIOptions{Charts: published()})
	ctx := context.Background()
	registry := "oci://" + r.Host() + "/charts"
	src := Source{Repository: registry, Name: chartName, PlainHTTP: true}
	opts := CacheOptions{Dir: t.TempDir()}
	manifest := "/v2/charts/" + chartName + "/manifests/" + v0

	c := newCharts(t, src, opts)
	for range 2 {
		ch, err := c.Load(ctx, v0)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if ch.Metadata.Version != v0 {
			t.Fatalf("loaded version %s", ch.Metadata.Version)
		}
	}
	if got := r.Requests(manifest); got == 0 {
		t.Fatalf("no request reached %s: %v", manifest, r.RequestCounts())
	}
	before := r.Requests(manifest)
	if _, err := newCharts(t, src, opts).Load(ctx, v0); err != nil {
		t.Fatal(err)
	}
	if got := r.Requests(manifest); got != before {
		t.Errorf("a restarted loader asked the registry again (%d -> %d manifest requests)", before, got)
	}
	digest, err := c.cache.digestOf(v0)
	if err != nil || len(digest) != 64 {
		t.Errorf("cached digest %q, %v", digest, err)
	}

	_, err = c.Load(ctx, "9.9.9")
	wantError[*ChartNotFoundError](t, err, "9.9.9", registry)

	if err := r.SetOnline(false); err != nil {
		t.Fatal(err)
	}
	if _, err := newCharts(t, src, opts).Load(ctx, v0); err != nil {
		t.Fatalf("cached chart with the registry offline: %v", err)
	}
	_, err = newCharts(t, src, opts).Load(ctx, v1)
	wantError[*UnreachableError](t, err, registry, v1, "cached versions: "+v0)
}
