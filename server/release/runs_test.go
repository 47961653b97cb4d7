package release

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

func TestRunsSerializeOneRelease(t *testing.T) {
	var r runs
	if r.busy("ns", "a") != nil {
		t.Fatal("busy before anything ran")
	}
	doneA, err := r.begin(t.Context(), "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	busy := r.busy("ns", "a")
	if busy == nil {
		t.Fatal("not busy while a run is on")
	}
	// Another release is independent.
	doneB, err := r.begin(t.Context(), "ns", "b")
	if err != nil {
		t.Fatalf("a run on another release waited: %v", err)
	}
	doneB()
	// The same release waits, within its context.
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := r.begin(short, "ns", "a"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ns/a") {
		t.Errorf("second run on ns/a while busy: %v, want DeadlineExceeded naming the release", err)
	}
	got := make(chan error, 1)
	go func() {
		done, err := r.begin(t.Context(), "ns", "a")
		if err == nil {
			done()
		}
		got <- err
	}()
	doneA()
	select {
	case <-busy:
	default:
		t.Error("busy not closed when the run ended")
	}
	if err := <-got; err != nil {
		t.Errorf("the waiting run: %v", err)
	}
	if r.busy("ns", "a") != nil {
		t.Error("still busy after every run ended")
	}
}

// testCallerGivesUp is the case TestReliabilityCreateDeadline met end to
// end: the caller's context ends while Helm is creating the chart's
// objects, and a delete comes right after. Deploy must answer at once,
// let Helm finish, and the uninstall must wait for it, so that it removes
// every object; before, objects created after the uninstall stayed.
func testCallerGivesUp(t *testing.T, env *testbed.Env, values map[string]any) {
	ctx, giveUp := context.WithCancel(t.Context())
	defer giveUp()
	hold := make(chan struct{})
	var once sync.Once
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			// The first of the chart's objects: the caller gives up as it is
			// sent, and the rest wait until the test lets them go.
			if req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, "/secrets") && strings.Contains(req.URL.Path, "/namespaces/") {
				once.Do(giveUp)
				<-hold
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
	if _, err := m.Deploy(ctx, target, name, ch, values); !errors.Is(err, context.Canceled) {
		close(hold)
		t.Fatalf("Deploy whose caller gave up: %v, want Canceled", err)
	}
	busy := m.Busy(ns, name)
	if busy == nil {
		close(hold)
		t.Fatal("Busy is nil while Helm is still creating the chart's objects")
	}
	uninstalled := make(chan error, 1)
	go func() { uninstalled <- m.Uninstall(t.Context(), target, name) }()
	select {
	case err := <-uninstalled:
		close(hold)
		t.Fatalf("Uninstall ran while the install was still writing (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(hold)
	select {
	case err := <-uninstalled:
		if err != nil {
			t.Fatalf("Uninstall: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Uninstall still waiting 2 minutes after the install was let go")
	}
	select {
	case <-busy:
	default:
		t.Error("Busy still open after the install and the uninstall ended")
	}
	var clusters clusterv1.ClusterList
	if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(clusters.Items) != 0 {
		t.Errorf("%d CAPI Clusters left after the uninstall", len(clusters.Items))
	}
	if _, err := m.Get(t.Context(), target, name); err == nil {
		t.Error("the release is still there after the uninstall")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestDeployAfterTheCallerGaveUp: a Deploy whose context has already ended
// starts nothing (no Helm action, no run left busy).
func TestDeployAfterTheCallerGaveUp(t *testing.T) {
	m := NewManager(Options{}, quiet())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// A Target without a getter: any attempt to reach a cluster would fail
	// differently.
	if _, err := m.Deploy(ctx, Target{Namespace: "ns"}, "demo", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Deploy after the caller gave up: %v, want Canceled", err)
	}
	if m.Busy("ns", "demo") != nil {
		t.Error("a run is left busy")
	}
}
