package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// bed is the management cluster (the test bed's kube-apiserver with the
// Cluster API CRDs) and the chart repository that the sidecars installed the
// operators' ways run against. One is started, on first use, for every test
// of the package that needs it: each only reads the cluster.
type bed struct {
	env    *testbed.Env
	charts *chartrepo.HTTP
}

var (
	bedOnce   sync.Once
	sharedBed *bed
	bedErr    error
)

// packageDir holds what the package's tests share (a sidecar binary built
// for a bare go test).
var packageDir string

func TestMain(m *testing.M) {
	var err error
	if packageDir, err = os.MkdirTemp("", "magnum-capi-deploy-"); err != nil {
		panic(err)
	}
	// Reachable by the users the tests run the binary as.
	if err := os.Chmod(packageDir, 0o755); err != nil {
		panic(err)
	}
	code := m.Run()
	if sharedBed != nil {
		_ = sharedBed.charts.Close()
		_ = sharedBed.env.Stop()
	}
	_ = os.RemoveAll(packageDir)
	os.Exit(code)
}

// theBed starts the bed once and returns it.
func theBed(t *testing.T) *bed {
	t.Helper()
	bedOnce.Do(func() {
		env, err := testbed.Start(context.Background(), testbed.Options{})
		if err != nil {
			bedErr = fmt.Errorf("starting the test bed: %w", err)
			return
		}
		charts, err := chartrepo.StartHTTP(chartrepo.HTTPOptions{Charts: harness.TestCharts()[:1]})
		if err != nil {
			_ = env.Stop()
			bedErr = fmt.Errorf("starting the chart repository: %w", err)
			return
		}
		sharedBed = &bed{env: env, charts: charts}
	})
	if bedErr != nil {
		t.Fatal(bedErr)
	}
	return sharedBed
}

// archivePath is the chart archive's path on the repository, for its
// request count.
func (b *bed) archivePath() string {
	return fmt.Sprintf("/%s-%s.tgz", harness.ChartName, harness.ChartVersion)
}

// sidecarConfig is the configuration of a sidecar installed at the paths an
// install way gives it (the management cluster's kubeconfig, the chart
// cache), on this bed: everything else is the defaults the install way
// ships with, debug logs in JSON.
func (b *bed) sidecarConfig(kubeconfig, cacheDir, metrics string) config.Config {
	c := config.Default()
	c.MetricsAddress = metrics
	c.Log = config.Log{Level: "debug", Format: "json"}
	c.ManagementClusters = []config.ManagementCluster{{Name: "default", Kubeconfig: kubeconfig}}
	c.Chart.Repository, c.Chart.Name, c.Chart.Version = b.charts.URL(), harness.ChartName, harness.ChartVersion
	c.Chart.CacheDir = cacheDir
	c.OpenStack.CloudsFile = ""
	return c
}

// kubeconfig is the bed's admin kubeconfig, for writing into a root.
func (b *bed) kubeconfig(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(b.env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// placeFile writes data at path under root, owned by uid:gid with mode,
// making missing parents root's 0755 (as an image or a host has them).
func placeFile(t *testing.T, root, path string, data []byte, uid, gid int, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(full, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
}
