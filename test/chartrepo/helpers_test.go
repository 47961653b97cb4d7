package chartrepo

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// testCharts publishes the test chart as 0.27.0 and as a 0.27.1 copy, as an
// upgrade test would.
func testCharts() []Chart {
	return []Chart{
		{Dir: testchart.Dir()},
		{Dir: testchart.Dir(), Version: "0.27.1"},
	}
}

// helmSettings keeps Helm's repository files in a directory of the test's.
func helmSettings(t *testing.T) *cli.EnvSettings {
	t.Helper()
	dir := t.TempDir()
	settings := cli.New()
	settings.RepositoryConfig = filepath.Join(dir, "repositories.yaml")
	settings.RepositoryCache = filepath.Join(dir, "cache")
	settings.RegistryConfig = filepath.Join(dir, "registry.json")
	return settings
}

// locateHTTP fetches a chart by repository URL and version, as
// `helm install --repo URL --version V` does, and loads it.
func locateHTTP(t *testing.T, options action.ChartPathOptions, name string) (*chart.Chart, error) {
	t.Helper()
	path, err := options.LocateChart(name, helmSettings(t))
	if err != nil {
		return nil, err
	}
	return loader.Load(path)
}

// locateOCI fetches an oci:// chart at a version, as
// `helm install oci://... --version V --plain-http` does, and loads it.
func locateOCI(t *testing.T, ref, version string) (*chart.Chart, error) {
	t.Helper()
	settings := helmSettings(t)
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(settings.RegistryConfig))
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{RegistryClient: client})
	install.SetRegistryClient(client)
	install.PlainHTTP = true
	install.Version = version
	path, err := install.LocateChart(ref, settings)
	if err != nil {
		return nil, err
	}
	return loader.Load(path)
}
