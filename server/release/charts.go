package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// CacheOptions shape the on-disk chart cache.
type CacheOptions struct {
	// Dir holds one directory per source (see diskCache).
	Dir string
	// IndexTTL is how long an HTTP repository's index is trusted before it
	// is downloaded again; 10 minutes when zero.
	IndexTTL time.Duration
}

// fetcher downloads one chart version and says which digest it verified
// the archive against.
type fetcher interface {
	fetch(ctx context.Context, version string) (archive []byte, sha256 string, err error)
}

// Charts loads chart versions from a Source. Archives from a repository or
// registry are kept on disk, keyed by source and version and verified by
// digest when fetched and again whenever read back, so a version fetched
// once installs while the repository is offline, across restarts. Verified
// archives are also kept in memory; every Load parses a fresh chart,
// because Helm's install and upgrade modify the chart they are given
// (disabled subcharts are removed from it).
type Charts struct {
	src   Source
	log   *slog.Logger
	from  fetcher // nil for a local source
	cache diskCache

	mu       sync.Mutex
	archives map[string][]byte
	fetching map[string]*sync.Mutex
}

// NewCharts returns a loader for src. It checks the source's settings and
// that the cache directory is writable, but contacts no repository.
func NewCharts(src Source, opts CacheOptions, log *slog.Logger) (*Charts, error) {
	if opts.IndexTTL <= 0 {
		opts.IndexTTL = 10 * time.Minute
	}
	c := &Charts{src: src, log: log, archives: map[string][]byte{}, fetching: map[string]*sync.Mutex{}}
	if src.kind() == kindLocal {
		return c, nil
	}
	if src.Name == "" {
		return nil, fmt.Errorf("chart.name: required for the repository %s", src.String())
	}
	if opts.Dir == "" {
		return nil, errors.New("chart.cacheDir: required for a repository or registry source")
	}
	var err error
	if c.cache, err = newDiskCache(opts.Dir, src); err != nil {
		return nil, err
	}
	switch src.kind() {
	case kindHTTP:
		c.from, err = newHTTPRepo(src, c.cache, opts.IndexTTL, log)
	case kindOCI:
		c.from, err = newOCIRepo(src, c.cache)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Source is where the charts come from.
func (c *Charts) Source() Source { return c.src }

// Load returns a new copy of the chart at version.
func (c *Charts) Load(ctx context.Context, version string) (*chart.Chart, error) {
	if err := checkVersion(c.src, version); err != nil {
		return nil, err
	}
	if c.from == nil {
		return loadLocal(c.src, version)
	}
	data, err := c.archive(ctx, version)
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, &BadChartError{Source: c.src.String(), Name: c.src.Name, Version: version, Problem: "the archive does not load: " + err.Error()}
	}
	if ch.Name() != c.src.Name || ch.Metadata.Version != version {
		return nil, &BadChartError{Source: c.src.String(), Name: c.src.Name, Version: version,
			Problem: fmt.Sprintf("the archive holds chart %s version %s", ch.Name(), ch.Metadata.Version)}
	}
	return ch, nil
}

// Warm fetches version into the cache if it is not there yet, so that the
// configured default installs even if the repository is down later.
func (c *Charts) Warm(ctx context.Context, version string) error {
	_, err := c.Load(ctx, version)
	return err
}

// archive returns the verified archive of version: from memory, from disk,
// or fetched. One fetch per version at a time; other versions proceed.
func (c *Charts) archive(ctx context.Context, version string) ([]byte, error) {
	c.mu.Lock()
	if data, ok := c.archives[version]; ok {
		c.mu.Unlock()
		return data, nil
	}
	lock, ok := c.fetching[version]
	if !ok {
		lock = &sync.Mutex{}
		c.fetching[version] = lock
	}
	c.mu.Unlock()

	lock.Lock()
	defer lock.Unlock()
	c.mu.Lock()
	data, ok := c.archives[version]
	c.mu.Unlock()
	if ok {
		return data, nil
	}

	data, digest, cached, err := c.cache.load(version)
	if err != nil {
		c.log.WarnContext(ctx, "chart cache entry rejected; fetching again", "source", c.src.String(), "version", version, "err", err)
	}
	if !cached {
		if data, digest, err = c.from.fetch(ctx, version); err != nil {
			return nil, err
		}
		if err := c.cache.store(version, data, digest); err != nil {
			// The verified archive still serves this process.
			c.log.WarnContext(ctx, "chart not cached on disk", "source", c.src.String(), "version", version, "err", err)
		}
		c.log.InfoContext(ctx, "chart fetched", "source", c.src.String(), "chart", c.src.Name, "version", version, "sha256", digest)
	} else {
		c.log.DebugContext(ctx, "chart read from the cache", "source", c.src.String(), "chart", c.src.Name, "version", version)
	}
	c.mu.Lock()
	c.archives[version] = data
	c.mu.Unlock()
	return data, nil
}
