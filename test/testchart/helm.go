package testchart

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"
)

// NewHelm returns Helm SDK settings and an action configuration that install
// into namespace on the cluster of kubeconfig, keeping Helm's repository,
// cache and registry files under dir instead of the user's home.
func NewHelm(kubeconfig, namespace, dir string) (*cli.EnvSettings, *action.Configuration, error) {
	settings := cli.New()
	settings.KubeConfig = kubeconfig
	// Without this, Helm creates the release's objects in "default" (only the
	// release record would go to the namespace given to Init).
	settings.SetNamespace(namespace)
	settings.RepositoryConfig = filepath.Join(dir, "repositories.yaml")
	settings.RepositoryCache = filepath.Join(dir, "repository-cache")
	settings.RegistryConfig = filepath.Join(dir, "registry-config.json")
	cfg := &action.Configuration{}
	logf := func(format string, v ...any) { slog.Debug(fmt.Sprintf(format, v...), "component", "helm") }
	if err := cfg.Init(settings.RESTClientGetter(), namespace, "secret", logf); err != nil {
		return nil, nil, fmt.Errorf("initialising Helm for namespace %s: %w", namespace, err)
	}
	return settings, cfg, nil
}
