package clusters

import (
	"context"
	"log/slog"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/release"
)

func TestWaitContextLeavesTimeForTheOperation(t *testing.T) {
	tests := []struct {
		name      string
		remaining time.Duration // 0: no deadline
		wantWait  time.Duration // how long the wait may last, ±1s
	}{
		{"Magnum's 60s RPC timeout", 60 * time.Second, 45 * time.Second},
		{"a short deadline: half of it", 10 * time.Second, 5 * time.Second},
		{"no deadline: no bound", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.remaining > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.remaining)
				defer cancel()
			}
			wait, cancel := waitContext(ctx)
			defer cancel()
			deadline, ok := wait.Deadline()
			if tt.wantWait == 0 {
				if ok {
					t.Errorf("a deadline %s appeared", deadline)
				}
				return
			}
			if got := time.Until(deadline); got < tt.wantWait-time.Second || got > tt.wantWait+time.Second {
				t.Errorf("wait bounded to %s, want about %s", got.Round(time.Second), tt.wantWait)
			}
		})
	}
}

func TestClusterLabels(t *testing.T) {
	got := clusterLabels(Spec{Cluster: helmvalues.Cluster{UUID: "0b6c4d2e-1", ProjectID: "p/1", UserID: "u"}})
	want := map[string]string{"magnum.openstack.org/cluster-uuid": "0b6c4d2e-1", "magnum.openstack.org/project-id": "p_1"}
	if len(got) != len(want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestOperationIDsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := operationID()
		if seen[id] || len(id) != 8 {
			t.Fatalf("operation id %q repeated or malformed", id)
		}
		seen[id] = true
	}
}

// TestWithLockMakesAGoneNamespaceAgain: the sidecar remembers namespaces
// it made; when one is gone anyway (an operator removed it), the Lease
// cannot be made there, and the operation makes the namespace again and
// goes on.
func TestWithLockMakesAGoneNamespaceAgain(t *testing.T) {
	var leaseCreates, namespaceCreates int
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *coordinationv1.Lease:
				leaseCreates++
				if leaseCreates == 1 { // the namespace was removed behind the sidecar's back
					if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}); err != nil {
						return err
					}
					return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, obj.GetNamespace())
				}
			case *corev1.Namespace:
				namespaceCreates++
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	s := &Service{log: slog.New(slog.DiscardHandler), cfg: Config{Holder: "sidecar-a", LockTTL: time.Minute},
		releases: release.NewManager(release.Options{}, slog.New(slog.DiscardHandler))}
	op := &operation{spec: Spec{Cluster: helmvalues.Cluster{StackID: "demo-abc", UUID: "u", ProjectID: "p"}},
		mc: &ManagementCluster{Kube: &kube.Cluster{Client: c}}, ns: "magnum-p"}
	ran := false
	if err := s.withLock(context.Background(), op, func(context.Context) error { ran = true; return nil }); err != nil {
		t.Fatalf("withLock: %v", err)
	}
	if !ran || leaseCreates != 2 || namespaceCreates != 2 {
		t.Errorf("ran %v, %d Lease creates, %d namespace creates; want true, 2 and 2 (made, then made again)", ran, leaseCreates, namespaceCreates)
	}
}
