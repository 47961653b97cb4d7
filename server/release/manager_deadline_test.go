package release

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

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
