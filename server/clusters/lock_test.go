package clusters

import (
	"context"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
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
