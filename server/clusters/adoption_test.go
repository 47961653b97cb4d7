package clusters

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// TestNoticeAdoption: a status or health poll logs, once per cluster and
// state, that a cluster's release is another driver's or adopted, and
// nothing for this driver's own clusters or clusters without objects yet.
func TestNoticeAdoption(t *testing.T) {
	objects := func(annotations map[string]string, release bool) *watchcache.Objects {
		return &watchcache.Objects{
			Cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: annotations}},
			Release: watchcache.ReleaseRecord{Exists: release, Revision: 1},
		}
	}
	foreign := objects(map[string]string{"other": "x"}, true)
	adopted := objects(map[string]string{helmvalues.ValuesAnnotation: helmvalues.ValuesAdopted}, true)
	managed := objects(map[string]string{helmvalues.ValuesAnnotation: helmvalues.ValuesManaged}, true)
	polls := []struct {
		stackID string
		objs    *watchcache.Objects
		want    string // a substring of the one line logged; "" wants none
	}{
		{"a-1", foreign, "installed by another driver"},
		{"a-1", foreign, ""}, // once
		{"b-2", foreign, "installed by another driver"},
		{"a-1", adopted, "adopted from another driver"}, // its state changed
		{"a-1", adopted, ""},
		{"m-3", managed, ""},
		{"n-4", &watchcache.Objects{Release: watchcache.ReleaseRecord{Exists: true}}, ""}, // no Cluster yet
		{"n-5", objects(nil, false), ""}, // no release (being deleted)
		{"n-6", nil, ""},
	}
	var buf bytes.Buffer
	s := &Service{log: slog.New(slog.NewTextHandler(&buf, nil))}
	for i, p := range polls {
		buf.Reset()
		s.noticeAdoption(context.Background(), Spec{Cluster: helmvalues.Cluster{StackID: p.stackID, UUID: "u"}}, p.objs)
		got := strings.TrimSpace(buf.String())
		switch {
		case p.want == "" && got != "":
			t.Errorf("poll %d (%s): logged %q, want nothing", i, p.stackID, got)
		case p.want != "" && (!strings.Contains(got, p.want) || strings.Count(got, "\n") != 0 || !strings.Contains(got, "stack_id="+p.stackID)):
			t.Errorf("poll %d (%s): logged %q, want one line with %q", i, p.stackID, got, p.want)
		}
	}
	// Another sidecar (Service) in the same process announces on its own.
	buf.Reset()
	other := &Service{log: slog.New(slog.NewTextHandler(&buf, nil))}
	other.noticeAdoption(context.Background(), Spec{Cluster: helmvalues.Cluster{StackID: "a-1"}}, foreign)
	if !strings.Contains(buf.String(), "installed by another driver") {
		t.Errorf("a second Service logged %q", buf.String())
	}
}
