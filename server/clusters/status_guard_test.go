package clusters

import (
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

func guardSpec(status string, groups ...string) Spec {
	s := Spec{Cluster: helmvalues.Cluster{StackID: "demo-aaaaaaaaaaaa", Status: status}}
	for i := 0; i+1 < len(groups); i += 2 {
		s.NodeGroups = append(s.NodeGroups, helmvalues.NodeGroup{UUID: groups[i], Name: groups[i], Status: groups[i+1]})
	}
	return s
}

// TestRevisionBehind: the guard waits for the newest revision this process
// wrote, deployed; deletions and clusters never written need no guard.
func TestRevisionBehind(t *testing.T) {
	for _, tc := range []struct {
		name     string
		written  []int
		status   string
		rec      watchcache.ReleaseRecord
		behind   bool
		contains string
	}{
		{"nothing written", nil, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 1, Status: "deployed"}, false, ""},
		{"cache has the revision", []int{3}, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 3, Status: "deployed"}, false, ""},
		{"cache has a newer one", []int{3}, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 4, Status: "deployed"}, false, ""},
		{"cache has the previous one", []int{3}, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 2, Status: "deployed"}, true, "release revision 3 (it has 2, deployed)"},
		{"cache has it still pending", []int{3}, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 3, Status: "pending-upgrade"}, true, "(it has 3, pending-upgrade)"},
		{"an older write does not lower the bar", []int{5, 4}, "UPDATE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 4, Status: "deployed"}, true, "revision 5"},
		{"create: no release seen yet", []int{1}, "CREATE_IN_PROGRESS", watchcache.ReleaseRecord{}, true, "revision 1 (it has 0, )"},
		{"deletion needs no guard", []int{3}, "DELETE_IN_PROGRESS", watchcache.ReleaseRecord{Revision: 2, Status: "deployed"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Service{}
			for _, r := range tc.written {
				s.rememberDeployed("demo-aaaaaaaaaaaa", r)
			}
			got := s.revisionBehind(guardSpec(tc.status), tc.rec)
			if (got != "") != tc.behind || !strings.Contains(got, tc.contains) {
				t.Errorf("revisionBehind = %q, want behind %v containing %q", got, tc.behind, tc.contains)
			}
		})
	}
	s := &Service{}
	s.rememberDeployed("demo-aaaaaaaaaaaa", 2)
	s.forgetDeployed("demo-aaaaaaaaaaaa")
	if got := s.revisionBehind(guardSpec("UPDATE_IN_PROGRESS"), watchcache.ReleaseRecord{}); got != "" {
		t.Errorf("after forgetDeployed: %q", got)
	}
}

// TestHoldBack: what the guard holds back while the cache is behind is
// exactly the moves from in progress to complete, of the cluster and of
// each node group; everything else passes through.
func TestHoldBack(t *testing.T) {
	const waiting = "waiting for: the watch cache to observe MachineDeployment demo-default-worker (resourceVersion 42)"
	for _, tc := range []struct {
		name      string
		spec      Spec
		res       capistatus.Result
		completes bool
		want      capistatus.Result
	}{
		{
			name: "cluster and groups complete: all held",
			spec: guardSpec("UPDATE_IN_PROGRESS", "master", "UPDATE_IN_PROGRESS", "worker", "UPDATE_IN_PROGRESS"),
			res: capistatus.Result{Status: "UPDATE_COMPLETE", APIAddress: "https://203.0.113.10:6443", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "master", Status: "UPDATE_COMPLETE", NodeCount: 1}, {UUID: "worker", Status: "UPDATE_COMPLETE", NodeCount: 3}}},
			completes: true,
			want: capistatus.Result{Status: "UPDATE_IN_PROGRESS", StatusReason: waiting, APIAddress: "https://203.0.113.10:6443", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "master", Status: "UPDATE_IN_PROGRESS", StatusReason: waiting, NodeCount: 1}, {UUID: "worker", Status: "UPDATE_IN_PROGRESS", StatusReason: waiting, NodeCount: 3}}},
		},
		{
			name: "only a node group completes (the cluster still waits for another)",
			spec: guardSpec("UPDATE_IN_PROGRESS", "a", "UPDATE_IN_PROGRESS", "b", "UPDATE_IN_PROGRESS"),
			res: capistatus.Result{Status: "UPDATE_IN_PROGRESS", StatusReason: "waiting for: node group b: 1 of 2 machines ready", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "a", Status: "UPDATE_COMPLETE"}, {UUID: "b", Status: "UPDATE_IN_PROGRESS", StatusReason: "waiting for: 1 of 2 machines ready"}}},
			completes: true,
			want: capistatus.Result{Status: "UPDATE_IN_PROGRESS", StatusReason: "waiting for: node group b: 1 of 2 machines ready", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "a", Status: "UPDATE_IN_PROGRESS", StatusReason: waiting}, {UUID: "b", Status: "UPDATE_IN_PROGRESS", StatusReason: "waiting for: 1 of 2 machines ready"}}},
		},
		{
			name:      "in progress: nothing to hold",
			spec:      guardSpec("CREATE_IN_PROGRESS", "w", "CREATE_IN_PROGRESS"),
			res:       capistatus.Result{Status: "CREATE_IN_PROGRESS", StatusReason: "waiting for: x", NodeGroups: []capistatus.NodeGroupResult{{UUID: "w", Status: "CREATE_IN_PROGRESS"}}},
			completes: false,
		},
		{
			name:      "already complete (S-01): not a move, not held",
			spec:      guardSpec("CREATE_COMPLETE", "w", "CREATE_COMPLETE"),
			res:       capistatus.Result{Status: "CREATE_COMPLETE", NodeGroups: []capistatus.NodeGroupResult{{UUID: "w", Status: "CREATE_COMPLETE"}}},
			completes: false,
		},
		{
			name:      "failed: a failure is not held",
			spec:      guardSpec("UPDATE_IN_PROGRESS", "w", "UPDATE_IN_PROGRESS"),
			res:       capistatus.Result{Status: "UPDATE_FAILED", StatusReason: "timed out", NodeGroups: []capistatus.NodeGroupResult{{UUID: "w", Status: "UPDATE_FAILED"}}},
			completes: false,
		},
		{
			name: "a deleted node group that is gone is not held (stale objects could only still be there)",
			spec: guardSpec("UPDATE_IN_PROGRESS", "old", "DELETE_IN_PROGRESS"),
			res: capistatus.Result{Status: "UPDATE_IN_PROGRESS", StatusReason: "waiting for: x", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "old", Status: "DELETE_COMPLETE", Destroy: true}}},
			completes: false,
		},
		{
			name:      "the cluster's deletion is not held",
			spec:      guardSpec("DELETE_IN_PROGRESS"),
			res:       capistatus.Result{Status: "DELETE_COMPLETE"},
			completes: false,
		},
		{
			name: "a new node group completing is held, a deleted one beside it is not",
			spec: guardSpec("UPDATE_IN_PROGRESS", "new", "CREATE_IN_PROGRESS", "old", "DELETE_IN_PROGRESS"),
			res: capistatus.Result{Status: "UPDATE_COMPLETE", NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "new", Status: "CREATE_COMPLETE", NodeCount: 2}, {UUID: "old", Status: "DELETE_COMPLETE", Destroy: true}}},
			completes: true,
			want: capistatus.Result{Status: "UPDATE_IN_PROGRESS", StatusReason: waiting, NodeGroups: []capistatus.NodeGroupResult{
				{UUID: "new", Status: "CREATE_IN_PROGRESS", StatusReason: waiting, NodeCount: 2}, {UUID: "old", Status: "DELETE_COMPLETE", Destroy: true}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completes(tc.spec, tc.res); got != tc.completes {
				t.Fatalf("completes = %v, want %v", got, tc.completes)
			}
			if !tc.completes {
				return
			}
			got := holdBack(tc.spec, tc.res, waiting)
			if !equalResults(got, tc.want) {
				t.Errorf("holdBack =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func equalResults(a, b capistatus.Result) bool {
	if a.Status != b.Status || a.StatusReason != b.StatusReason || a.APIAddress != b.APIAddress || len(a.NodeGroups) != len(b.NodeGroups) {
		return false
	}
	for i := range a.NodeGroups {
		x, y := a.NodeGroups[i], b.NodeGroups[i]
		if x.UUID != y.UUID || x.Status != y.Status || x.StatusReason != y.StatusReason || x.NodeCount != y.NodeCount || x.Destroy != y.Destroy {
			return false
		}
	}
	return true
}
