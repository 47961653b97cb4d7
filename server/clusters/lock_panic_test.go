package clusters

import (
	"context"
	"errors"
	"log/slog"
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

// TestWithLockPanicReleasesTheLease: a panic in an operation under the
// cluster's Lease, in its own goroutine or in one it started, fails that
// operation alone (a panics.Error, counted), the Lease is deleted from the
// API server rather than renewed forever, and the next operation on the
// cluster takes it at once and runs.
func TestWithLockPanicReleasesTheLease(t *testing.T) {
	env, err := testbed.Start(t.Context(), testbed.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	kc, err := kube.Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
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
