package release

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// loadLocal loads a chart from the local path: a chart directory or archive
// (one version: its own), or a directory of archives named
// <name>-<version>.tgz (any number of versions, e.g. mirrored for a site
// without Internet access). Local charts are read on every load: they are
// the operator's files, and may be replaced in place.
func loadLocal(src Source, version string) (*chart.Chart, error) {
	notFound := func(err error) error {
		return &ChartNotFoundError{Source: src.String(), Name: src.Name, Version: version, Err: err}
	}
	info, err := os.Stat(src.Repository)
	if err != nil {
		return nil, notFound(err)
	}
	path := src.Repository
	if info.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "Chart.yaml")); errors.Is(err, fs.ErrNotExist) {
			path = filepath.Join(path, src.Name+"-"+version+".tgz")
		}
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, notFound(err)
	}
	if ch.Metadata.Version != version {
		return nil, notFound(fmt.Errorf("the local chart %s is version %s", path, ch.Metadata.Version))
	}
	if src.Name != "" && ch.Name() != src.Name {
		return nil, notFound(fmt.Errorf("the local chart %s is named %s", path, ch.Name()))
	}
	return ch, nil
}
