package e2e

import (
	"context"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// assertNothingLeft fails the test unless nothing of c is left: no object
// of the cluster in its namespace (the templates the chart keeps past the
// uninstall and the Secrets Cluster API made included), no application
// credential of the cluster in Keystone and no Nova server group. Called
// right at the first DELETE_COMPLETE, with no wait: Magnum forgets the
// cluster at that answer, and nothing would ever look again.
func assertNothingLeft(t *testing.T, c *cluster, ns string) {
	t.Helper()
	left, err := harness.ClusterRemains(context.Background(), stack.Env.Client, ns, c.spec.Cluster.StackId, c.spec.Cluster.Uuid)
	if err != nil {
		t.Fatal(err)
	}
	for _, ac := range credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid) {
		left = append(left, "application credential "+ac.Name)
	}
	for _, g := range serverGroupsOf(c.spec.Cluster.StackId) {
		left = append(left, "server group "+g.Name)
	}
	if len(left) > 0 {
		t.Errorf("at DELETE_COMPLETE, still there: %v", left)
	}
}
