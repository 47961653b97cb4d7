package clusters

import (
	"context"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/magnum-capi/magnum-capi/server/release"
)

// The domain's ports to Helm: small interfaces in the adapter's own types
// (server/release implements them; unit tests with fakes).

// Releases installs, reads and uninstalls the clusters' releases.
type Releases interface {
	// Deploy installs the release, or upgrades the one there, with ch and
	// values.
	Deploy(ctx context.Context, t release.Target, name string, ch *chart.Chart, values map[string]any) (*release.Release, error)
	// Get is the deployed release; a *release.NotFoundError when there is
	// none.
	Get(ctx context.Context, t release.Target, name string) (*release.Release, error)
	// Uninstall removes the release; one already gone is not an error.
	Uninstall(ctx context.Context, t release.Target, name string) error
}

// Charts loads the chart versions the values ask for.
type Charts interface {
	Load(ctx context.Context, version string) (*chart.Chart, error)
}

var (
	_ Releases = (*release.Manager)(nil)
	_ Charts   = (*release.Charts)(nil)
)
