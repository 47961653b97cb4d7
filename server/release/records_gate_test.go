package release

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

// countWrites counts the requests other than reads on one connection.
type countWrites struct{ n atomic.Int64 }

func (c *countWrites) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet {
			c.n.Add(1)
		}
		return next.RoundTrip(r)
	})
}

// testWriteGate: Deploy reads and renders before Target.BeforeWrite is
// ready but writes nothing until it is; when it fails, the Deploy fails
// with its error and nothing of the release is written. Target.Wrote hears
// of each record write that was made, and of none when the gate refused.
func testWriteGate(t *testing.T, env *testbed.Env, values map[string]any) {
	ctx := t.Context()
	writes := &countWrites{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(writes.wrap)
	kc, err := kube.Connect("write-gate", cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{}, quiet())
	for _, fail := range []bool{false, true} {
		ns := "write-gate" + map[bool]string{false: "-ready", true: "-fails"}[fail]
		if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
		ch, err := testchart.Load()
		if err != nil {
			t.Fatal(err)
		}
		before := writes.n.Load()
		var writtenAtGate int64 = -1
		refused := errors.New("keystone is down")
		var wrote atomic.Int64
		target := Target{Getter: kc.HelmGetter(ns), Namespace: ns, Wrote: func() { wrote.Add(1) }, BeforeWrite: func() error {
			if writtenAtGate < 0 {
				writtenAtGate = writes.n.Load() - before
			}
			if fail {
				return refused
			}
			return nil
		}}
		_, err = m.Deploy(ctx, target, "demo", ch, values)
		if writtenAtGate != 0 {
			t.Errorf("%s: %d writes before the gate was asked (want it asked, before any)", ns, writtenAtGate)
		}
		if !fail {
			if err != nil {
				t.Fatalf("%s: Deploy: %v", ns, err)
			}
			// The record made pending, then marked deployed.
			if n := wrote.Load(); n < 2 {
				t.Errorf("%s: Wrote heard of %d record writes, want at least 2", ns, n)
			}
			if err := m.Uninstall(ctx, Target{Getter: kc.HelmGetter(ns), Namespace: ns}, "demo"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !errors.Is(err, refused) {
			t.Errorf("%s: Deploy: %v, want the gate's error", ns, err)
		}
		if n := wrote.Load(); n != 0 {
			t.Errorf("%s: Wrote heard of %d record writes after the gate failed, want none", ns, n)
		}
		if n := writes.n.Load() - before; n != 0 {
			t.Errorf("%s: %d writes after the gate failed, want none", ns, n)
		}
		var records corev1.SecretList
		if err := env.Client.List(ctx, &records, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
			t.Fatal(err)
		}
		if len(records.Items) != 0 {
			t.Errorf("%s: %d release records written after the gate failed", ns, len(records.Items))
		}
	}
}
