package clusters

import (
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// A failed cleanup keeps the cluster out of DELETE_COMPLETE and says so in
// the tenant's words; the operator's log gets the error whole.
func TestDeleteCleanupResultTellsTheTenantWithoutURLs(t *testing.T) {
	cause := errors.New(`deleting application credential 3f2a: Delete "https://keystone.internal:5000/v3/users/0c9d2e7a-5b1f-4e3d-8a61-c1d2e3f4a5b6/application_credentials/3f2a": dial tcp 10.0.0.5:5000: connect: connection refused`)
	res := deleteCleanupResult(capistatus.Result{Status: statusDeleteComplete, NodeGroups: []capistatus.NodeGroupResult{{Status: statusDeleteComplete}}}, cause)
	want := "Cluster API resources are gone, but cleaning up failed: deleting application credential 3f2a: calling the identity service: dial tcp: connect: connection refused"
	if res.Status != statusDeleteInProgress || res.NodeGroups[0].Status != statusDeleteInProgress {
		t.Errorf("status %s, node group %s, want %s for both", res.Status, res.NodeGroups[0].Status, statusDeleteInProgress)
	}
	if res.StatusReason != want {
		t.Errorf("status_reason\n got  %q\n want %q", res.StatusReason, want)
	}
	if len(res.Rewritten) != 1 || res.Rewritten[0] != cause.Error() {
		t.Errorf("Rewritten = %q, want the error whole", res.Rewritten)
	}
	if strings.Contains(res.StatusReason, "keystone.internal") {
		t.Error("the tenant reads the host name")
	}
}

// The detail is for the poll that changes the reason, not for every poll.
func TestOnlyNewDetail(t *testing.T) {
	res := capistatus.Result{StatusReason: "waiting for: x", Rewritten: []string{"original"}}
	for _, tt := range []struct {
		held string
		want int
	}{{"", 1}, {"waiting for: y", 1}, {"waiting for: x", 0}} {
		spec := Spec{Cluster: helmvalues.Cluster{StatusReason: tt.held}}
		if got := onlyNewDetail(spec, res).Rewritten; len(got) != tt.want {
			t.Errorf("Magnum holds %q: Rewritten = %q, want %d", tt.held, got, tt.want)
		}
	}
}
