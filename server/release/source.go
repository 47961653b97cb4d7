package release

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Source says where the openstack-cluster chart comes from.
type Source struct {
	// Repository is an HTTP(S) chart repository URL, an OCI registry
	// reference (oci://host/path, the chart is Repository/Name), or a local
	// path: a chart directory, a packaged chart (.tgz), or a directory of
	// packaged charts named <Name>-<version>.tgz.
	Repository string
	Name       string
	// CAFile, Username and Password authenticate to the repository.
	CAFile, Username, Password string
	// PlainHTTP talks to an OCI registry without TLS (test registries).
	PlainHTTP bool
}

type sourceKind int

const (
	kindLocal sourceKind = iota
	kindHTTP
	kindOCI
)

func (s Source) kind() sourceKind {
	switch {
	case strings.HasPrefix(s.Repository, "oci://"):
		return kindOCI
	case strings.HasPrefix(s.Repository, "http://"), strings.HasPrefix(s.Repository, "https://"):
		return kindHTTP
	default:
		return kindLocal
	}
}

// String names the source in errors and logs: the repository without any
// user information a URL might carry.
func (s Source) String() string {
	if s.kind() == kindLocal {
		return s.Repository
	}
	u, err := url.Parse(s.Repository)
	if err != nil {
		return "(unparsable repository URL)"
	}
	u.User = nil
	return strings.TrimSuffix(u.String(), "/")
}

// cacheKey names the source's directory in the on-disk cache: the same
// chart name and version from two repositories are different artifacts.
func (s Source) cacheKey() string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s", s.kind(), strings.TrimSuffix(s.String(), "/"), s.Name)))
	return hex.EncodeToString(sum[:8])
}

// checkVersion refuses versions that could escape the cache directory or
// confuse a registry reference. helmvalues already requires semver; this is
// the adapter's own guard.
func checkVersion(src Source, version string) error {
	if version == "" {
		const problem = "no chart version given (chart.version or the template label capi_helm_chart_version)"
		return &ChartNotFoundError{Source: src.String(), Name: src.Name, Version: version, Err: errors.New(problem), ForUser: problem}
	}
	if strings.Trim(version, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-+") != "" || strings.Contains(version, "..") {
		const problem = "not a chart version: expected a semantic version such as 0.27.0"
		return &ChartNotFoundError{Source: src.String(), Name: src.Name, Version: version, Err: errors.New(problem), ForUser: problem}
	}
	return nil
}
