package chartrepo

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/registry"
)

// OCIOptions configure an OCI registry of charts.
type OCIOptions struct {
	// Charts are pushed when the registry starts.
	Charts []Chart
	// Repository is the path charts are pushed under; "charts" when empty,
	// giving oci://127.0.0.1:PORT/charts/<chart>.
	Repository string
}

// OCI is an in-memory OCI registry (go-containerregistry's) on 127.0.0.1,
// plain HTTP, holding charts pushed with Helm's own registry client, as
// `helm push` does.
type OCI struct {
	srv        *server
	repository string
	dir        string
	client     *registry.Client
}

// StartOCI starts the registry and pushes opts.Charts. Close it when done.
func StartOCI(opts OCIOptions) (_ *OCI, err error) {
	dir, err := os.MkdirTemp("", "chartrepo-oci-")
	if err != nil {
		return nil, err
	}
	r := &OCI{dir: dir, repository: strings.Trim(opts.Repository, "/")}
	if r.repository == "" {
		r.repository = "charts"
	}
	defer func() {
		if err != nil {
			_ = r.Close()
		}
	}()
	handler := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	if r.srv, err = startServer(handler, nil); err != nil {
		return nil, err
	}
	// Credentials go to a file of the registry's own; a registry client
	// otherwise reads the user's Docker and Helm logins.
	r.client, err = registry.NewClient(
		registry.ClientOptPlainHTTP(),
		registry.ClientOptCredentialsFile(filepath.Join(dir, "registry-config.json")),
		registry.ClientOptWriter(io.Discard),
	)
	if err != nil {
		return nil, fmt.Errorf("creating a Helm registry client: %w", err)
	}
	for _, c := range opts.Charts {
		if err := r.Publish(c); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Publish packages c and pushes it as <Host>/<repository>/<name>:<version>.
func (r *OCI) Publish(c Chart) error {
	packageDir, err := os.MkdirTemp(r.dir, "package-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(packageDir)
	path, name, version, err := Package(c, packageDir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ref := fmt.Sprintf("%s/%s/%s:%s", r.Host(), r.repository, name, version)
	if _, err := r.client.Push(data, ref); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// Host is the registry's host and port, 127.0.0.1:PORT.
func (r *OCI) Host() string { return r.srv.addr }

// Ref is the oci:// reference of a chart, without version, as given to Helm
// (e.g. oci://127.0.0.1:PORT/charts/openstack-cluster).
func (r *OCI) Ref(chart string) string {
	return fmt.Sprintf("oci://%s/%s/%s", r.Host(), r.repository, chart)
}

// SetOnline takes the registry down (nothing listens on its port) or brings
// it back on the same address, with the same charts.
func (r *OCI) SetOnline(online bool) error { return r.srv.setOnline(online) }

// Requests is how many requests reached path, e.g.
// "/v2/charts/openstack-cluster/manifests/0.27.0".
func (r *OCI) Requests(path string) int { return r.srv.requestCount(path) }

// RequestCounts is the request count of every path requested so far.
func (r *OCI) RequestCounts() map[string]int { return r.srv.requestCounts() }

// Close stops the registry, dropping its charts.
func (r *OCI) Close() error {
	var errs []error
	if r.srv != nil {
		errs = append(errs, r.srv.close())
	}
	errs = append(errs, os.RemoveAll(r.dir))
	return errors.Join(errs...)
}
