package clusters

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// TestDeletionStarted: the deletion timeout runs from the latest delete
// request — the Cluster's deletionTimestamp, the request recorded on it by
// any replica, or this process's own — so a retried delete gets the whole
// timeout again.
func TestDeletionStarted(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	updated := t0.Add(-time.Hour)
	cluster := func(annotation string) *watchcache.Objects {
		c := &clusterv1.Cluster{}
		ts := metav1.NewTime(t0)
		c.DeletionTimestamp = &ts
		if annotation != "" {
			c.Annotations = map[string]string{kube.DeleteRequestedAnnotation: annotation}
		}
		return &watchcache.Objects{Cluster: c}
	}
	for _, tc := range []struct {
		name   string
		objs   *watchcache.Objects
		memory time.Time
		want   time.Time
	}{
		{"no Cluster, nothing recorded: Magnum's updated_at", &watchcache.Objects{}, time.Time{}, updated},
		{"first attempt: the deletionTimestamp", cluster(""), time.Time{}, t0},
		{"retried on another replica: the annotation", cluster(t0.Add(30 * time.Minute).Format(time.RFC3339)), time.Time{}, t0.Add(30 * time.Minute)},
		{"an annotation older than the deletion is ignored", cluster(t0.Add(-time.Minute).Format(time.RFC3339)), time.Time{}, t0},
		{"a malformed annotation is ignored", cluster("yesterday"), time.Time{}, t0},
		{"retried here, cache not caught up: memory", cluster(""), t0.Add(40 * time.Minute), t0.Add(40 * time.Minute)},
		{"memory older than the annotation: the annotation", cluster(t0.Add(50 * time.Minute).Format(time.RFC3339)), t0.Add(40 * time.Minute), t0.Add(50 * time.Minute)},
		{"Cluster gone from the cache, retried here: memory", &watchcache.Objects{}, t0.Add(40 * time.Minute), t0.Add(40 * time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{}
			if !tc.memory.IsZero() {
				s.deletes.note("demo", tc.memory)
			}
			if got := s.deletionStarted("demo", tc.objs, updated); !got.Equal(tc.want) {
				t.Errorf("deletionStarted = %v, want %v", got, tc.want)
			}
		})
	}
	s := &Service{}
	s.deletes.note("demo", t0)
	s.deletes.forget("demo")
	if got := s.deletionStarted("demo", &watchcache.Objects{}, updated); !got.Equal(updated) {
		t.Errorf("after forget: %v, want %v", got, updated)
	}
}
