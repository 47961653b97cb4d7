package chartrepo

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Chart is a chart directory to publish.
type Chart struct {
	// Dir is the chart's directory (with its subcharts under charts/).
	Dir string
	// Version replaces the version in Chart.yaml when set, so one directory
	// can be published as several releases (e.g. 0.27.0 and 0.27.1).
	Version string
}

// Package writes c as "<name>-<version>.tgz" into dir, as `helm package`
// does, and returns the file's path, name and version.
func Package(c Chart, dir string) (path, name, version string, err error) {
	ch, err := loader.Load(c.Dir)
	if err != nil {
		return "", "", "", fmt.Errorf("loading chart %s: %w", c.Dir, err)
	}
	if c.Version != "" {
		ch.Metadata.Version = c.Version
	}
	path, err = chartutil.Save(ch, dir)
	if err != nil {
		return "", "", "", fmt.Errorf("packaging chart %s %s: %w", ch.Name(), ch.Metadata.Version, err)
	}
	return path, ch.Name(), ch.Metadata.Version, nil
}
