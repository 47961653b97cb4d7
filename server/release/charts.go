package release

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
)

// Source says where the openstack-cluster chart comes from.
type Source struct {
	// Repository is an HTTP(S) chart repository URL, an OCI registry
	// reference (oci://host/path, the chart is Repository/Name), or a local
	// chart directory or .tgz (Name and versions are then the chart's own).
	Repository string
	Name       string
	// CAFile, Username and Password authenticate to the repository.
	CAFile, Username, Password string
	// PlainHTTP talks to an OCI registry without TLS (test registries).
	PlainHTTP bool
}

func (s Source) kind() string {
	switch {
	case strings.HasPrefix(s.Repository, "oci://"):
		return "oci"
	case strings.HasPrefix(s.Repository, "http://"), strings.HasPrefix(s.Repository, "https://"):
		return "http"
	default:
		return "local"
	}
}

// ChartNotFoundError: the source has no such chart version.
type ChartNotFoundError struct {
	Source, Name, Version string
	Err                   error
}

func (e *ChartNotFoundError) Error() string {
	return fmt.Sprintf("chart %s version %s is not available from %s: %v", e.Name, e.Version, e.Source, e.Err)
}

func (e *ChartNotFoundError) Unwrap() error { return e.Err }

// FailedPrecondition classifies the error: the template asks for a chart
// version the configured repository cannot supply.
func (e *ChartNotFoundError) FailedPrecondition() bool { return true }

// Charts loads chart versions from a Source, downloading each version once
// per process into CacheDir.
type Charts struct {
	src      Source
	cacheDir string
	log      *slog.Logger

	mu     sync.Mutex
	loaded map[string]*chart.Chart
}

// NewCharts returns a loader for src caching under cacheDir.
func NewCharts(src Source, cacheDir string, log *slog.Logger) *Charts {
	return &Charts{src: src, cacheDir: cacheDir, log: log, loaded: map[string]*chart.Chart{}}
}

// Load returns the chart at version (the local chart's own version when the
// source is a path and version is empty or matches).
func (c *Charts) Load(ctx context.Context, version string) (*chart.Chart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.loaded[version]; ok {
		return ch, nil
	}
	ch, err := c.fetch(ctx, version)
	if err != nil {
		return nil, err
	}
	c.loaded[version] = ch
	return ch, nil
}

func (c *Charts) fetch(_ context.Context, version string) (*chart.Chart, error) {
	notFound := func(err error) error {
		return &ChartNotFoundError{Source: c.src.Repository, Name: c.src.Name, Version: version, Err: err}
	}
	if c.src.kind() == "local" {
		ch, err := loader.Load(c.src.Repository)
		if err != nil {
			return nil, notFound(err)
		}
		if version != "" && ch.Metadata.Version != version {
			return nil, notFound(fmt.Errorf("the local chart is version %s", ch.Metadata.Version))
		}
		return ch, nil
	}
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(c.cacheDir, "repository")
	settings.RepositoryConfig = filepath.Join(c.cacheDir, "repositories.yaml")
	settings.RegistryConfig = filepath.Join(c.cacheDir, "registry.json")
	if err := os.MkdirAll(settings.RepositoryCache, 0o755); err != nil {
		return nil, err
	}
	// The registry client can only be set through an Install action.
	locate := action.NewInstall(new(action.Configuration))
	locate.ChartPathOptions = action.ChartPathOptions{
		Version: version, Username: c.src.Username, Password: c.src.Password, CaFile: c.src.CAFile,
	}
	ref := c.src.Name
	if c.src.kind() == "oci" {
		ref = strings.TrimSuffix(c.src.Repository, "/") + "/" + c.src.Name
		clientOpts := []registry.ClientOption{registry.ClientOptCredentialsFile(settings.RegistryConfig)}
		if c.src.PlainHTTP {
			clientOpts = append(clientOpts, registry.ClientOptPlainHTTP())
		}
		rc, err := registry.NewClient(clientOpts...)
		if err != nil {
			return nil, err
		}
		locate.SetRegistryClient(rc)
		locate.ChartPathOptions.PlainHTTP = c.src.PlainHTTP
	} else {
		locate.ChartPathOptions.RepoURL = c.src.Repository
	}
	path, err := locate.ChartPathOptions.LocateChart(ref, settings)
	if err != nil {
		return nil, notFound(err)
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", path, err)
	}
	c.log.Info("chart loaded", "source", c.src.Repository, "chart", ch.Metadata.Name, "version", ch.Metadata.Version)
	return ch, nil
}
