package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// TestServerGroupsLifecycle follows the Nova server groups the driver makes
// through a cluster's life, as Magnum's conductor calls it: created with the
// cluster (one for the control plane, one per worker node group, with the
// server_group_policies label's policy) and referenced by the release's
// values; unchanged by a resize; one more for a new node group; that one
// deleted with its node group; all deleted with the cluster, leaving nothing
// in Nova or the management cluster. Nova is the recorded-JSON double
// (test/openstackfake): it cannot run here.
func TestServerGroupsLifecycle(t *testing.T) {
	t.Parallel() // its own cluster and server groups; after the sequential ones, so after TestServerGroupQuota restored the quota
	c := newCluster(t, "servergroups", "v1.33.2", 1)
	if c.spec.Cluster.Labels == nil {
		c.spec.Cluster.Labels = map[string]string{}
	}
	c.spec.Cluster.Labels["server_group_policies"] = "anti-affinity"
	before := footprintOf(t, c.owner())
	stackID := c.create(t, driver)
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)

	groups := groupsByName(stackID)
	cp, worker := groups[stackID+"-control-plane"], groups[stackID+"-default-worker"]
	if len(groups) != 2 || cp.ID == "" || worker.ID == "" {
		t.Fatalf("server groups after create: %+v, want %s-control-plane and %s-default-worker", groups, stackID, stackID)
	}
	for _, g := range groups {
		if g.Policy != "anti-affinity" {
			t.Errorf("group %s has policy %q, want the label's anti-affinity", g.Name, g.Policy)
		}
	}
	wantIDs(t, "after create", stackID, map[string]string{"controlPlane": cp.ID, "default-worker": worker.ID})

	// A resize changes no id (a new one would replace every machine).
	ctx, cancel := callCtx()
	_, err := driver.ResizeCluster(ctx, c.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if got := groupsByName(stackID); len(got) != 2 {
		t.Errorf("the resize changed the server groups: %+v", got)
	}
	wantIDs(t, "after resize", stackID, map[string]string{"controlPlane": cp.ID, "default-worker": worker.ID})

	// create_nodegroup makes the new node group's group.
	extra := &pb.NodeGroup{Uuid: uuid.NewString(), Name: "extra", ClusterId: c.spec.Cluster.Uuid, ProjectId: c.spec.Cluster.ProjectId,
		Role: "worker", FlavorId: c.nodegroup("default-worker").FlavorId, ImageId: c.spec.ClusterTemplate.ImageId, NodeCount: 1,
		StackId: stackID, Status: "CREATE_IN_PROGRESS"}
	c.spec.Nodegroups = append(c.spec.Nodegroups, extra)
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	ctx, cancel = callCtx()
	_, err = driver.CreateNodeGroup(ctx, &pb.CreateNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: extra.Uuid})
	cancel()
	if err != nil {
		t.Fatalf("CreateNodeGroup: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	extraGroup := groupsByName(stackID)[stackID+"-extra"]
	if extraGroup.ID == "" || extraGroup.Policy != "anti-affinity" {
		t.Fatalf("no anti-affinity group for node group extra: %+v", groupsByName(stackID))
	}
	wantIDs(t, "after create_nodegroup", stackID, map[string]string{"controlPlane": cp.ID, "default-worker": worker.ID, "extra": extraGroup.ID})

	// delete_nodegroup deletes it once the release has dropped the node group.
	c.nodegroup("extra").Status = "DELETE_IN_PROGRESS"
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	ctx, cancel = callCtx()
	_, err = driver.DeleteNodeGroup(ctx, &pb.DeleteNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: extra.Uuid})
	cancel()
	if err != nil {
		t.Fatalf("DeleteNodeGroup: %v", err)
	}
	if _, left := groupsByName(stackID)[stackID+"-extra"]; left {
		t.Errorf("node group extra's server group is left after delete_nodegroup")
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	for _, ng := range c.spec.Nodegroups { // the status answer had Magnum forget it
		if ng.Name == "extra" {
			t.Errorf("node group extra is still in the cluster after delete_nodegroup: %s", ng.Status)
		}
	}
	wantIDs(t, "after delete_nodegroup", stackID, map[string]string{"controlPlane": cp.ID, "default-worker": worker.ID})

	c.remove(t, driver)
	if left := serverGroupsOf(stackID); len(left) > 0 {
		t.Errorf("server groups left after DELETE_COMPLETE: %+v", left)
	}
	for _, change := range before.changes(footprintOf(t, c.owner())) {
		if change != "added default Namespace "+projectNamespace() { // shared by the project's clusters
			t.Errorf("left after DELETE_COMPLETE: %s", change)
		}
	}
}

// TestServerGroupQuota: a project out of server groups gets a create refused
// before the credential, Secrets or release are made, with a message naming
// Nova's quota and no endpoint; deleting the failed cluster removes the one
// group that fitted, and nothing is left behind.
func TestServerGroupQuota(t *testing.T) {
	c := newCluster(t, "sgquota", "v1.33.2", 1)
	// Room for one more group: the create needs two.
	existing := serverGroupIDs()
	stack.OpenStack.SetServerGroupQuota(len(existing) + 1)
	t.Cleanup(func() { stack.OpenStack.SetServerGroupQuota(0) })
	before := footprintOf(t, c.owner())
	ctx, cancel := callCtx()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	st := status.Convert(err)
	if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "quota server_groups exceeded") || strings.Contains(st.Message(), stack.OpenStack.URL) {
		t.Fatalf("create over the server group quota: %v; want FailedPrecondition naming the server_groups quota and no endpoint", err)
	}
	stack.OpenStack.SetServerGroupQuota(0)
	// The control plane's group fitted; its name says the stack_id the
	// create never returned.
	stackID := stackIDOfNewGroups(existing)
	if stackID == "" {
		t.Fatalf("the refused create made no control plane group before reaching the quota")
	}
	for _, change := range before.changes(footprintOf(t, owner{stackID: stackID, uuid: c.spec.Cluster.Uuid})) {
		switch change {
		case "added default Namespace " + projectNamespace(), "added nova ServerGroup " + stackID + "-control-plane":
		default:
			t.Errorf("the refused create made more than the group that fitted: %s", change)
		}
	}
	// Magnum marks it CREATE_FAILED and the user deletes it.
	removeRefused(t, c, stackID, before)
}

// removeRefused deletes a cluster whose create was refused after it made
// its server groups, as the user deletes a CREATE_FAILED cluster, and
// checks that nothing of it is left but the project's namespace: no server
// group of stackID and nothing the footprint before the create lacked.
func removeRefused(t *testing.T, c *cluster, stackID string, before footprint) {
	t.Helper()
	c.remove(t, driver)
	if left := serverGroupsOf(stackID); len(left) > 0 {
		t.Errorf("server groups left after DELETE_COMPLETE: %+v", left)
	}
	for _, change := range before.changes(footprintOf(t, owner{stackID: stackID, uuid: c.spec.Cluster.Uuid})) {
		if change != "added default Namespace "+projectNamespace() {
			t.Errorf("left after the refused create was deleted: %s", change)
		}
	}
}

// serverGroupIDs are the ids of the test project's server groups in Nova.
func serverGroupIDs() map[string]bool {
	ids := map[string]bool{}
	for _, g := range stack.OpenStack.ServerGroups(stack.Info.Project.ID) {
		ids[g.ID] = true
	}
	return ids
}

// stackIDOfNewGroups is the stack_id in the name of a control plane group
// not among existing: that of a create that failed before returning it.
func stackIDOfNewGroups(existing map[string]bool) string {
	for _, g := range stack.OpenStack.ServerGroups(stack.Info.Project.ID) {
		if !existing[g.ID] && strings.HasSuffix(g.Name, "-control-plane") {
			return strings.TrimSuffix(g.Name, "-control-plane")
		}
	}
	return ""
}

// groupsByName are the stack's server groups in Nova, by name.
func groupsByName(stackID string) map[string]openstackfake.ServerGroup {
	out := map[string]openstackfake.ServerGroup{}
	for _, g := range serverGroupsOf(stackID) {
		out[g.Name] = g
	}
	return out
}

// wantIDs checks the deployed release's serverGroupId values: "controlPlane"
// and worker node groups by chart name.
func wantIDs(t *testing.T, when, stackID string, want map[string]string) {
	t.Helper()
	revs := history(t, stack.Env.Config, projectNamespace(), stackID)
	values := revs[len(revs)-1].Config
	got := map[string]string{}
	if cp, ok := values["controlPlane"].(map[string]any); ok {
		got["controlPlane"], _ = cp["serverGroupId"].(string)
	}
	list, _ := values["nodeGroups"].([]any)
	for _, item := range list {
		ng, _ := item.(map[string]any)
		name, _ := ng["name"].(string)
		got[name], _ = ng["serverGroupId"].(string)
	}
	if len(got) != len(want) {
		t.Errorf("%s: release has server group ids %v, want %v", when, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: release has server group ids %v, want %v", when, got, want)
			return
		}
	}
}
