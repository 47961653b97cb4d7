// Package testchart is the project's stand-in for the azimuth-cloud
// openstack-cluster Helm chart 0.27.0 (test/testdata/charts/openstack-cluster):
// where it lives, and rendering it the way Helm installs it, so tests can look
// at the objects the driver's values produce without a cluster.
//
// It is test-only code; the product never imports it.
package testchart

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// Name and Version are those of the real chart the test chart stands in for.
const (
	Name    = "openstack-cluster"
	Version = "0.27.0"
)

// Dir is the test chart's directory.
func Dir() string {
	return filepath.Join(testbed.TestdataDir(), "charts", Name)
}

// Load reads the test chart with its addons subchart.
func Load() (*chart.Chart, error) {
	ch, err := loader.Load(Dir())
	if err != nil {
		return nil, fmt.Errorf("loading the test chart from %s: %w", Dir(), err)
	}
	return ch, nil
}

// Render renders ch for a release name and namespace as Helm renders it for
// an install (helm-unittest renders the same way, which is how the real chart's
// snapshots were made), and returns its objects in Helm's install order.
// Template failures (fail, required) come back as errors. Like Helm, it drops
// disabled subcharts from ch, so load a fresh chart for each render.
func Render(ch *chart.Chart, release, namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	if err := chartutil.ProcessDependenciesWithMerge(ch, values); err != nil {
		return nil, fmt.Errorf("processing the dependencies of chart %s: %w", ch.Name(), err)
	}
	options := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	top, err := chartutil.ToRenderValues(ch, values, options, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values for chart %s: %w", ch.Name(), err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", ch.Name(), err)
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("sorting the manifests of chart %s: %w", ch.Name(), err)
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("chart %s renders %d hooks; the openstack-cluster chart has none", ch.Name(), len(hooks))
	}
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return ParseManifest(b.String())
}

// ParseManifest splits a Helm release manifest into objects, in order. Each
// document is parsed as sent to the API server, whole: a block scalar closing a
// document keeps its final line break.
func ParseManifest(manifest string) ([]*unstructured.Unstructured, error) {
	reader := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("splitting the rendered manifest: %w", err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("parsing a rendered document: %w\n%s", err, doc)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
