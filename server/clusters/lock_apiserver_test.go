package clusters

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/panics"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// TestWithLockOnTheAPIServer runs withLock's failure paths against a real
// API server.
func TestWithLockOnTheAPIServer(t *testing.T) {
	env, err := testbed.Start(t.Context(), testbed.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	kc, err := kube.Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("a panic gives the Lease back", func(t *testing.T) { testWithLockPanic(t, env, kc) })
	t.Run("a Lease taken over cancels the operation", func(t *testing.T) { testWithLockLost(t, env, kc) })
}

// testWithLockPanic: a panic in an operation under the cluster's Lease, in
// its own goroutine or in one it started, fails that operation alone (a
// panics.Error, counted), the Lease is deleted from the API server rather
// than renewed forever, and the next operation on the cluster takes it at
// once and runs.
func testWithLockPanic(t *testing.T, env *testbed.Env, kc *kube.Cluster) {
	s := &Service{log: slog.New(slog.DiscardHandler), cfg: Config{Holder: "sidecar-a", LockTTL: 30 * time.Second},
		releases: release.NewManager(release.Options{}, slog.New(slog.DiscardHandler))}
	tests := []struct {
		name  string
		where string
		fn    func(context.Context) error
	}{
		{"in the operation", "clusters/withLock", func(context.Context) error { panic("a bug under the lease") }},
		{"in a step it runs beside another", "clusters/allOf", func(ctx context.Context) error {
			return allOf(ctx, slog.New(slog.DiscardHandler), func() error { return nil }, func() error { panic("a bug in a concurrent step") })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: "demo-abc", UUID: "u", ProjectID: "p"}},
				mc: &ManagementCluster{Kube: kc}, ns: "magnum-p"}
			before := panics.Count(tt.where)
			err := s.withLock(t.Context(), op, tt.fn)
			var pe *panics.Error
			if !errors.As(err, &pe) || pe.Where != tt.where {
				t.Fatalf("withLock: %v, want the panic in %s as a panics.Error", err, tt.where)
			}
			if got := panics.Count(tt.where); got != before+1 {
				t.Errorf("panics counted at %s: %v, want %v", tt.where, got, before+1)
			}
			var lease coordinationv1.Lease
			key := client.ObjectKey{Namespace: op.ns, Name: kube.LeasePrefix + "demo-abc"}
			if err := env.Client.Get(t.Context(), key, &lease); !apierrors.IsNotFound(err) {
				t.Fatalf("the Lease after the panic: %v (holder %v), want it deleted", err, lease.Spec.HolderIdentity)
			}
			ran := false
			if err := s.withLock(t.Context(), op, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
				t.Errorf("the next operation: ran %v, %v", ran, err)
			}
		})
	}
}

// testWithLockLost: another sidecar takes the Lease over while an
// operation holds it (as one whose clock judged it expired would): the
// operation's context is cancelled with a kube.LostError as its cause at
// the next renewal, withLock fails with it (Aborted, a message for the
// tenant without the sidecars' names), and the new holder keeps its Lease.
func testWithLockLost(t *testing.T, env *testbed.Env, kc *kube.Cluster) {
	// 9 s: a renewal may take seconds on a loaded machine, and one that
	// does not succeed within two thirds of the TTL gives the Lease up
	// (another error than the takeover this test is about).
	s := &Service{log: slog.New(slog.DiscardHandler), cfg: Config{Holder: "sidecar-a", LockTTL: 9 * time.Second},
		releases: release.NewManager(release.Options{}, slog.New(slog.DiscardHandler))}
	op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: "lost-abc", UUID: "u2", ProjectID: "p"}},
		mc: &ManagementCluster{Kube: kc}, ns: "magnum-p"}
	key := client.ObjectKey{Namespace: op.ns, Name: kube.LeasePrefix + "lost-abc"}
	other := "sidecar-b/0000beef"
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var cause error
	err := s.withLock(ctx, op, func(ctx context.Context) error {
		var lease coordinationv1.Lease
		if err := env.Client.Get(ctx, key, &lease); err != nil {
			return err
		}
		lease.Spec.HolderIdentity = &other
		if err := env.Client.Update(ctx, &lease); err != nil {
			return err
		}
		<-ctx.Done() // the operation's next write would see it
		cause = context.Cause(ctx)
		return ctx.Err()
	})
	var lost *kube.LostError
	if !errors.As(cause, &lost) {
		t.Errorf("the operation's context ended with %v, want a kube.LostError", cause)
	}
	if !errors.As(err, &lost) || !lost.Aborted() || strings.Contains(lost.UserMessage(), "sidecar-") {
		t.Fatalf("withLock: %v, want an Aborted kube.LostError with a message for the tenant", err)
	}
	var lease coordinationv1.Lease
	if err := env.Client.Get(t.Context(), key, &lease); err != nil || *lease.Spec.HolderIdentity != other {
		t.Errorf("the new holder's Lease after the operation: %v, %v", err, lease.Spec.HolderIdentity)
	}
}
