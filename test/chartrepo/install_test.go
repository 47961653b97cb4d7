package chartrepo

import (
	"context"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestInstallFromRepositories installs the chart as fetched from each kind of
// repository into the test bed, as the sidecar will: by repository URL and
// version over TLS with basic auth, and by oci:// reference.
func TestInstallFromRepositories(t *testing.T) {
	// Every v1beta1 CAPI write draws a deprecation warning; they are expected.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	env, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		t.Fatalf("starting the test bed: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the test bed: %v", err)
		}
	})

	httpRepo, err := StartHTTP(HTTPOptions{Charts: testCharts(), TLS: true, Username: "magnum", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = httpRepo.Close() })
	ociRepo, err := StartOCI(OCIOptions{Charts: testCharts()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ociRepo.Close() })

	for _, tc := range []struct {
		name   string
		locate func(t *testing.T) (*chart.Chart, error)
	}{
		{"HTTP repository", func(t *testing.T) (*chart.Chart, error) {
			return locateHTTP(t, action.ChartPathOptions{
				RepoURL: httpRepo.URL(), Version: "0.27.0", CaFile: httpRepo.CAFile(), Username: "magnum", Password: "s3cret",
			}, "openstack-cluster")
		}},
		{"OCI registry", func(t *testing.T) (*chart.Chart, error) {
			return locateOCI(t, ociRepo.Ref("openstack-cluster"), "0.27.0")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := tc.locate(t)
			if err != nil {
				t.Fatal(err)
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "chartrepo-"}}
			if err := env.Client.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			_, cfg, err := testchart.NewHelm(env.KubeconfigPath, ns.Name, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			install := action.NewInstall(cfg)
			install.ReleaseName = "demo"
			install.Namespace = ns.Name
			values := map[string]any{
				"cloudCredentialsSecretName": "demo-cloud-credentials",
				"kubernetesVersion":          "1.33.4",
				"machineImageId":             "3c1f1f7e-5a8a-4f6e-9d3b-6f2f9d1e2a10",
				"controlPlane":               map[string]any{"machineFlavor": "m1.medium"},
				"nodeGroups":                 []any{map[string]any{"name": "workers", "machineFlavor": "m1.large", "machineCount": 2}},
			}
			rel, err := install.RunWithContext(ctx, ch, values)
			if err != nil {
				t.Fatalf("helm install: %v", err)
			}
			if rel.Info.Status != release.StatusDeployed || rel.Chart.Metadata.Version != "0.27.0" {
				t.Errorf("release %s at chart %s, want deployed at 0.27.0", rel.Info.Status, rel.Chart.Metadata.Version)
			}
			var cluster clusterv1.Cluster
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "demo"}, &cluster); err != nil {
				t.Fatalf("the release's Cluster: %v", err)
			}
			if got := cluster.Spec.ControlPlaneRef.Name; got != "demo-control-plane" {
				t.Errorf("Cluster's control plane is %q, want demo-control-plane", got)
			}
		})
	}
}
