package clusters

import (
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/capistatus"
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
