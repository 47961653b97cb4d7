package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/registry"
	"oras.land/oras-go/v2/errdef"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// ociRepo is a chart in an OCI registry: oci://host/path plus the chart
// name, one tag per version. The manifest's chart layer digest is the
// archive's expected digest.
type ociRepo struct {
	src    Source
	ref    string // host/path/name, without oci://
	client *registry.Client
	cache  diskCache
}

func newOCIRepo(src Source, cache diskCache) (*ociRepo, error) {
	hc, err := httpClient(src)
	if err != nil {
		return nil, err
	}
	opts := []registry.ClientOption{
		registry.ClientOptHTTPClient(hc),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptEnableCache(true),
		// A file of our own: otherwise Helm's client reads the logins of
		// whatever user the sidecar runs as.
		registry.ClientOptCredentialsFile(filepath.Join(cache.dir, "registry.json")),
	}
	if src.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	if src.Username != "" {
		opts = append(opts, registry.ClientOptBasicAuth(src.Username, src.Password))
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("chart.repository %s: registry client: %w", src.String(), err)
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(src.Repository, "oci://"), "/") + "/" + src.Name
	return &ociRepo{src: src, ref: ref, client: client, cache: cache}, nil
}

type pulled struct {
	res *registry.PullResult
	err error
}

// fetch pulls the chart layer of tag version ("+" becomes "_", as helm push
// writes it) and checks it against the manifest's digest.
func (r *ociRepo) fetch(ctx context.Context, version string) ([]byte, string, error) {
	ref := r.ref + ":" + strings.ReplaceAll(version, "+", "_")
	// Helm's Pull takes no context; the HTTP client's timeout bounds it, and
	// the caller is not kept waiting past its own deadline.
	done := make(chan pulled, 1)
	go func() {
		var res *registry.PullResult
		err := panics.Run(ctx, nil, "release/ociPull", func() (err error) {
			res, err = r.client.Pull(ref, registry.PullOptWithChart(true))
			return err
		})
		done <- pulled{res, err}
	}()
	var p pulled
	select {
	case p = <-done:
	case <-ctx.Done():
		return nil, "", r.unreachable(version, ctx.Err())
	}
	switch {
	case errors.Is(p.err, errdef.ErrNotFound):
		return nil, "", &ChartNotFoundError{Source: r.src.String(), Name: r.src.Name, Version: version, Err: fmt.Errorf("the registry has no tag %s: %w", ref, p.err)}
	case p.err != nil:
		return nil, "", r.unreachable(version, p.err)
	case p.res.Chart == nil || len(p.res.Chart.Data) == 0:
		return nil, "", &BadChartError{Source: r.src.String(), Name: r.src.Name, Version: version, Problem: "the manifest has no chart layer"}
	}
	want := normalizeDigest(p.res.Chart.Digest)
	got := sha256Hex(p.res.Chart.Data)
	if want == "" || got != want {
		return nil, "", &BadChartError{Source: r.src.String(), Name: r.src.Name, Version: version,
			Problem: fmt.Sprintf("the chart layer has sha256 %s, but the manifest (%s) says %q", got, p.res.Manifest.Digest, p.res.Chart.Digest)}
	}
	return p.res.Chart.Data, want, nil
}

func (r *ociRepo) unreachable(version string, err error) error {
	return &UnreachableError{Source: r.src.String(), Name: r.src.Name, Version: version, Cached: r.cache.versions(), Err: err}
}
