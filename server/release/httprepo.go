package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/repo"
)

// Limits on what a repository may send, so a broken or hostile one cannot
// fill the disk or memory.
const (
	maxIndexBytes = 64 << 20
	maxChartBytes = 32 << 20
)

// minIndexRefresh is how often a version missing from the cached index
// sends us back to the repository before the TTL ends: a version published
// a minute ago is found, and a template naming a version that does not exist
// cannot make every request download the index.
const minIndexRefresh = 30 * time.Second

// httpRepo is a classic chart repository (index.yaml plus archives). Its
// index is kept in memory and on disk and trusted for ttl; archives are
// verified against the index's digest.
type httpRepo struct {
	src    Source
	base   *url.URL
	client *http.Client
	cache  diskCache
	ttl    time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu      sync.Mutex
	index   *repo.IndexFile
	fetched time.Time
}

func newHTTPRepo(src Source, cache diskCache, ttl time.Duration, log *slog.Logger) (*httpRepo, error) {
	base, err := url.Parse(strings.TrimSuffix(src.Repository, "/") + "/")
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("chart.repository %q: not a valid http(s) URL", src.String())
	}
	client, err := httpClient(src)
	if err != nil {
		return nil, err
	}
	return &httpRepo{src: src, base: base, client: client, cache: cache, ttl: ttl, now: time.Now, log: log}, nil
}

// fetch downloads version's archive and checks it against the index's digest.
func (r *httpRepo) fetch(ctx context.Context, version string) ([]byte, string, error) {
	entry, err := r.entry(ctx, version)
	if err != nil {
		return nil, "", err
	}
	if len(entry.URLs) == 0 {
		return nil, "", &BadChartError{Source: r.src.String(), Name: r.src.Name, Version: version, Problem: "its index entry has no URL"}
	}
	u, err := r.base.Parse(entry.URLs[0])
	if err != nil {
		return nil, "", &BadChartError{Source: r.src.String(), Name: r.src.Name, Version: version, Problem: fmt.Sprintf("its index entry's URL %q does not parse", entry.URLs[0])}
	}
	data, err := r.get(ctx, u, maxChartBytes)
	if err != nil {
		return nil, "", r.unreachable(version, err)
	}
	got := sha256Hex(data)
	want := normalizeDigest(entry.Digest)
	if want == "" {
		// Every index Helm writes has digests; an old or hand-made one may
		// not. The archive is then pinned to what we downloaded now.
		r.log.WarnContext(ctx, "chart index entry has no sha256 digest; pinning the downloaded archive",
			"source", r.src.String(), "chart", r.src.Name, "version", version, "sha256", got)
		want = got
	}
	if got != want {
		return nil, "", &BadChartError{Source: r.src.String(), Name: r.src.Name, Version: version,
			Problem: fmt.Sprintf("the archive from %s has sha256 %s, but the repository's index says %s", u.Redacted(), got, want)}
	}
	return data, want, nil
}

func (r *httpRepo) unreachable(version string, err error) error {
	return &UnreachableError{Source: r.src.String(), Name: r.src.Name, Version: version, Cached: r.cache.versions(), Err: err}
}

// entry finds version in the index: the one in memory or on disk while it
// is younger than the TTL, else a fresh one. A stale index is still used
// when the repository cannot be reached, to name the archive's URL.
func (r *httpRepo) entry(ctx context.Context, version string) (*repo.ChartVersion, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.index == nil {
		r.loadDiskIndex(ctx)
	}
	var refreshErr error
	refreshed := false
	if r.index == nil || r.now().Sub(r.fetched) >= r.ttl {
		refreshErr = r.refresh(ctx)
		refreshed = refreshErr == nil
	}
	if r.index != nil {
		if cv := lookup(r.index, r.src.Name, version); cv != nil {
			return cv, nil
		}
		if !refreshed && refreshErr == nil && r.now().Sub(r.fetched) >= minIndexRefresh {
			if refreshErr = r.refresh(ctx); refreshErr == nil {
				if cv := lookup(r.index, r.src.Name, version); cv != nil {
					return cv, nil
				}
			}
		}
	}
	if refreshErr != nil {
		return nil, r.unreachable(version, refreshErr)
	}
	return nil, &ChartNotFoundError{Source: r.src.String(), Name: r.src.Name, Version: version,
		Err: fmt.Errorf("the repository's index (fetched %s) lists %s", r.fetched.UTC().Format(time.RFC3339), listed(r.index, r.src.Name))}
}

// loadDiskIndex adopts the index a previous run left, with its age.
func (r *httpRepo) loadDiskIndex(ctx context.Context) {
	info, err := os.Stat(r.cache.indexPath())
	if err != nil {
		return
	}
	idx, err := repo.LoadIndexFile(r.cache.indexPath())
	if err != nil {
		r.log.WarnContext(ctx, "ignoring an unreadable cached chart index", "path", r.cache.indexPath(), "err", err)
		return
	}
	r.index, r.fetched = idx, info.ModTime()
}

// refresh downloads index.yaml, checks that it parses, and replaces the
// cached one.
func (r *httpRepo) refresh(ctx context.Context) error {
	u := r.base.JoinPath("index.yaml")
	data, err := r.get(ctx, u, maxIndexBytes)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(r.cache.dir, ".index-*.yaml")
	if err != nil {
		return fmt.Errorf("writing the chart cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("writing the chart cache: %w", werr)
	}
	idx, err := repo.LoadIndexFile(tmp.Name())
	if err != nil {
		return fmt.Errorf("%s is not a chart repository index: %w", u.Redacted(), err)
	}
	if err := os.Rename(tmp.Name(), r.cache.indexPath()); err != nil {
		return fmt.Errorf("writing the chart cache: %w", err)
	}
	r.index, r.fetched = idx, r.now()
	r.log.DebugContext(ctx, "chart repository index fetched", "source", r.src.String(), "charts", len(idx.Entries[r.src.Name]))
	return nil
}

// HTTPStatusError is a repository answering with something other than 200.
type HTTPStatusError struct {
	URL  string
	Code int
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

// get downloads u, sending the configured credentials only to the
// repository's own host (as Helm does unless told to pass them everywhere):
// an index may point archives at another server.
func (r *httpRepo) get(ctx context.Context, u *url.URL, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "magnum-capi")
	if r.src.Username != "" && u.Scheme == r.base.Scheme && u.Host == r.base.Host {
		req.SetBasicAuth(r.src.Username, r.src.Password)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			// url.Error quotes the URL; make sure no user information is in it.
			return nil, fmt.Errorf("GET %s: %w", u.Redacted(), uerr.Err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &HTTPStatusError{URL: u.Redacted(), Code: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d MiB", u.Redacted(), limit>>20)
	}
	return data, nil
}

// lookup is the index entry of exactly this version (templates name exact
// versions; no ranges).
func lookup(idx *repo.IndexFile, name, version string) *repo.ChartVersion {
	for _, cv := range idx.Entries[name] {
		if cv != nil && cv.Metadata != nil && cv.Version == version {
			return cv
		}
	}
	return nil
}

// listed summarises the versions an index offers, newest first, bounded:
// the real repository lists almost two thousand.
func listed(idx *repo.IndexFile, name string) string {
	entries := idx.Entries[name]
	if len(entries) == 0 {
		return "no chart named " + name
	}
	const shown = 8
	var vs []string
	for i, cv := range entries {
		if i == shown {
			vs = append(vs, fmt.Sprintf("and %d more", len(entries)-shown))
			break
		}
		vs = append(vs, cv.Version)
	}
	return "versions " + strings.Join(vs, ", ")
}
