package release

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// TestManagerOnTestbed runs the release operations against a real API
// server: install, upgrade with bounded history, recovery from each
// pending state a crash can leave, the driver's labels on the release and
// on every object, and idempotent uninstall.
func TestManagerOnTestbed(t *testing.T) {
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	env, err := testbed.Start(t.Context(), testbed.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	kc, err := kube.Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
	values := baseValues(t)
	labels := map[string]string{"magnum.openstack.org/cluster-uuid": "c0ffee", "magnum.openstack.org/project-id": "p1"}
	m := NewManager(Options{HistoryMax: 3}, quiet())

	tests := []struct {
		name string
		// crash is the status a crashed operation leaves on a new newest
		// revision; "" for none.
		crash helmrelease.Status
		// installed says whether a deployed revision exists before the crash.
		installed bool
	}{
		{"plain install and upgrades", "", true},
		{"pending-install", helmrelease.StatusPendingInstall, false},
		{"pending-upgrade", helmrelease.StatusPendingUpgrade, true},
		{"pending-rollback", helmrelease.StatusPendingRollback, true},
	}
	t.Run("discovery shared and refreshed", func(t *testing.T) { testDiscoveryShared(t, env) })
	t.Run("the caller gives up mid-install", func(t *testing.T) { testCallerGivesUp(t, env, values) })
	t.Run("concurrent writes of an upgrade", func(t *testing.T) { testConcurrentUpgrade(t, env, kc, values) })
	t.Run("roles before their bindings", func(t *testing.T) { testRolesBeforeBindings(t, env, kc) })
	t.Run("the first write waits for the caller", func(t *testing.T) { testWriteGate(t, env, values) })
	t.Run("record labels", func(t *testing.T) { testRecordLabels(t, env, kc, values) })
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			ns := "release-test-" + string(rune('a'+i))
			if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
				t.Fatal(err)
			}
			target := Target{Getter: kc.HelmGetter(ns), Namespace: ns, Labels: labels}
			const name = "demo"
			if tt.installed {
				deploy(t, m, target, name, values, 1)
			}
			if tt.crash != "" {
				leavePending(t, kc, ns, name, tt.crash)
			}
			// Five more operations: each succeeds, history stays at 3.
			for range 5 {
				deploy(t, m, target, name, values, 0)
			}
			cfg := new(action.Configuration)
			if err := cfg.Init(target.Getter, ns, "secret", func(string, ...any) {}); err != nil {
				t.Fatal(err)
			}
			history, err := cfg.Releases.History(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(history) != 3 {
				t.Errorf("%d revisions kept, want 3 (historyMax)", len(history))
			}
			deployed := 0
			for _, r := range history {
				if r.Info.Status.IsPending() {
					t.Errorf("revision %d still %s", r.Version, r.Info.Status)
				}
				if r.Info.Status == helmrelease.StatusDeployed {
					deployed++
				}
			}
			if deployed != 1 {
				t.Errorf("%d deployed revisions, want 1", deployed)
			}

			var secrets corev1.SecretList
			if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets.Items {
				if s.Labels["magnum.openstack.org/cluster-uuid"] != "c0ffee" || s.Labels["magnum.openstack.org/project-id"] != "p1" {
					t.Errorf("release Secret %s labels %v lack the cluster's", s.Name, s.Labels)
				}
			}
			var cluster clusterv1.Cluster
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cluster); err != nil {
				t.Fatal(err)
			}
			if cluster.Labels["magnum.openstack.org/cluster-uuid"] != "c0ffee" || cluster.Labels[kube.ChartClusterLabel] != name {
				t.Errorf("CAPI Cluster labels %v: want the chart's and the driver's", cluster.Labels)
			}
			osmts := &unstructured.UnstructuredList{}
			osmts.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
			osmts.SetKind("OpenStackMachineTemplateList")
			if err := env.Client.List(ctx, osmts, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, o := range osmts.Items {
				if o.GetLabels()["magnum.openstack.org/project-id"] != "p1" {
					t.Errorf("OpenStackMachineTemplate %s labels %v", o.GetName(), o.GetLabels())
				}
			}

			for range 2 {
				if err := m.Uninstall(ctx, target, name); err != nil {
					t.Fatalf("Uninstall: %v", err)
				}
			}
			if _, err := m.Get(ctx, target, name); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("Get after uninstall: %v", err)
			}
		})
	}
}

func deploy(t *testing.T, m *Manager, target Target, name string, values map[string]any, wantRevision int) {
	t.Helper()
	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := m.Deploy(context.Background(), target, name, ch, values)
	if err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	if rel.Status != "deployed" || (wantRevision != 0 && rel.Revision != wantRevision) {
		t.Fatalf("Deploy gave revision %d %s", rel.Revision, rel.Status)
	}
}

// leavePending writes what a sidecar killed mid-operation leaves: a newest
// revision in a pending state, written by Helm's own storage.
func leavePending(t *testing.T, kc *kube.Cluster, ns, name string, status helmrelease.Status) {
	t.Helper()
	cfg := new(action.Configuration)
	if err := cfg.Init(kc.HelmGetter(ns), ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	version := 1
	if last, err := cfg.Releases.Last(name); err == nil {
		version = last.Version + 1
	}
	rel := &helmrelease.Release{
		Name: name, Namespace: ns, Version: version, Chart: ch, Config: map[string]any{},
		Info: &helmrelease.Info{Status: status, Description: "interrupted by a test"},
	}
	if err := cfg.Releases.Create(rel); err != nil {
		t.Fatal(err)
	}
}

// testCallerGivesUp: the caller's context ends while Helm is creating the
// chart's objects. Helm cannot be cancelled midway, so Deploy runs it to
// its end and returns the deployed release with every object made; a
// release left half-written and marked failed would leave objects an
// uninstall racing it never removes (TestReliabilityCreateDeadline).
func testCallerGivesUp(t *testing.T, env *testbed.Env, values map[string]any) {
	ctx, giveUp := context.WithCancel(t.Context())
	defer giveUp()
	var once sync.Once
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			// The first of the chart's objects: the caller gives up as it
			// is sent.
			if req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, "/secrets") && strings.Contains(req.URL.Path, "/namespaces/") {
				once.Do(giveUp)
			}
			return rt.RoundTrip(req)
		})
	})
	kc, err := kube.Connect("give-up", cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns, name = "release-give-up", "demo"
	if err := kc.EnsureNamespace(t.Context(), ns, nil); err != nil {
		t.Fatal(err)
	}
	target := Target{Getter: kc.HelmGetter(ns), Namespace: ns}
	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{}, quiet())
	rel, err := m.Deploy(ctx, target, name, ch, values)
	if err != nil {
		t.Fatalf("Deploy whose caller gave up mid-install: %v, want it run to its end", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the caller never gave up: the test's transport did not see the chart's objects")
	}
	if rel.Status != "deployed" {
		t.Errorf("release %s after the caller gave up, want deployed", rel.Status)
	}
	var clusters clusterv1.ClusterList
	if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(clusters.Items) != 1 {
		t.Errorf("%d CAPI Clusters after the install, want 1", len(clusters.Items))
	}
}

// TestDeployAfterTheCallerGaveUp: a Deploy whose context has already ended
// starts nothing.
func TestDeployAfterTheCallerGaveUp(t *testing.T) {
	m := NewManager(Options{}, quiet())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// A Target without a getter: any attempt to reach a cluster would fail
	// differently.
	if _, err := m.Deploy(ctx, Target{Namespace: "ns"}, "demo", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Deploy after the caller gave up: %v, want Canceled", err)
	}
}
