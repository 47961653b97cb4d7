package e2e

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/rest"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// What the resource tests do with clusters, through any sidecar.

// projectNamespace is where the stack's project's clusters live.
func projectNamespace() string { return helmvalues.Namespace("magnum", stack.Info.Project.ID) }

// create asks d to create c and records the stack_id.
func (c *cluster) create(t *testing.T, d pb.DriverServiceClient) string {
	t.Helper()
	ctx, cancel := callCtx()
	defer cancel()
	resp, err := d.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	if err != nil {
		t.Fatalf("CreateCluster %s: %v", c.spec.Cluster.Name, err)
	}
	c.spec.Cluster.StackId = resp.GetStackId()
	return resp.GetStackId()
}

// setStatus marks the cluster and its node groups as Magnum's conductor
// does before calling the driver.
func (c *cluster) setStatus(status string) {
	c.spec.Cluster.Status = status
	for _, ng := range c.spec.Nodegroups {
		ng.Status = status
	}
}

// resizeRequest is Magnum's resize of the default worker group to workers,
// with the spec already showing the new count, as the conductor saves it.
func (c *cluster) resizeRequest(workers int32) *pb.ResizeClusterRequest {
	ng := c.nodegroup("default-worker")
	ng.NodeCount = workers
	c.spec.Cluster.NodeCount = workers
	c.setStatus("UPDATE_IN_PROGRESS")
	return &pb.ResizeClusterRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: ng.Uuid, NodeCount: workers}
}

// upgradeRequest is Magnum's upgrade to a new template of Kubernetes
// version (an image the test bed has), with the spec showing it, as the
// conductor saves it.
func (c *cluster) upgradeRequest(version string) *pb.UpgradeClusterRequest {
	tmpl := c.spec.ClusterTemplate
	tmpl.Uuid, tmpl.Name, tmpl.ImageId = uuid.NewString(), "k8s-"+version, stack.Info.Images[version]
	c.spec.Cluster.ClusterTemplateId = tmpl.Uuid
	for _, ng := range c.spec.Nodegroups {
		ng.ImageId = tmpl.ImageId
	}
	c.setStatus("UPDATE_IN_PROGRESS")
	return &pb.UpgradeClusterRequest{Context: c.ctx, Spec: c.spec}
}

// remove deletes the cluster through d, waits for DELETE_COMPLETE and
// checks, at that first answer, that nothing of the cluster is left.
func (c *cluster) remove(t *testing.T, d pb.DriverServiceClient) {
	t.Helper()
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel := callCtx()
	_, err := d.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster %s: %v", c.spec.Cluster.Name, err)
	}
	c.waitOn(t, d, "DELETE_COMPLETE", 3*time.Minute)
	assertNothingLeft(t, c, projectNamespace())
}

// history is the release's revisions in a management cluster, oldest
// first, as Helm stores them.
func history(t *testing.T, cfg *rest.Config, ns, name string) []*helmrelease.Release {
	t.Helper()
	kc, err := kube.Connect("history", cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := new(action.Configuration)
	if err := hc.Init(kc.HelmGetter(ns), ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	revs, err := hc.Releases.History(name)
	if errors.Is(err, helmdriver.ErrReleaseNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("history of release %s/%s: %v", ns, name, err)
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].Version < revs[j].Version })
	return revs
}

// statuses summarises revisions as "1:superseded 2:deployed".
func statuses(revs []*helmrelease.Release) string {
	var parts []string
	for _, r := range revs {
		parts = append(parts, strconv.Itoa(r.Version)+":"+r.Info.Status.String())
	}
	return strings.Join(parts, " ")
}

// credentialsOf lists, as Keystone's admin, a user's application
// credentials named for a cluster.
func credentialsOf(t *testing.T, userID, clusterUUID string) []applicationcredentials.ApplicationCredential {
	t.Helper()
	var out []applicationcredentials.ApplicationCredential
	for _, ac := range userCredentials(t, userID) {
		if strings.HasPrefix(ac.Name, "magnum-"+clusterUUID+"-") {
			out = append(out, ac)
		}
	}
	return out
}
