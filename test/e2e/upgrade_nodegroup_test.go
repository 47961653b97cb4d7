package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// TestUpgradeOneNodeGroup: `openstack coe cluster upgrade --nodegroup gpu`
// moves that worker group alone. magnum-api allows it only to the cluster's
// own template, so the group here lags (it was made with an older image, as
// `openstack coe nodegroup create --image` does; it is in the create request
// to spare a second rollout) and catches up: its MachineDeployment moves to
// the cluster's version while the control plane and the default workers are
// not touched. A group newer than the control plane and a downgrade are
// refused with nothing applied; the same request twice converges.
func TestUpgradeOneNodeGroup(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "ngupg", "v1.33.2", 1)
	gpu := &pb.NodeGroup{Uuid: uuid.NewString(), Name: "gpu", ClusterId: c.spec.Cluster.Uuid, ProjectId: c.spec.Cluster.ProjectId,
		Role: "worker", FlavorId: "m1.medium", ImageId: stack.Info.Images["v1.32.5"], NodeCount: 1, Status: "CREATE_IN_PROGRESS"}
	c.spec.Nodegroups = append(c.spec.Nodegroups, gpu)
	c.create(t, driver)
	t.Cleanup(func() { c.remove(t, driver) })
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	assertVersions(t, c, "v1.33.2", map[string]string{"default-worker": "v1.33.2", "gpu": "v1.32.5"})
	workers := machineDeployment(t, c, "default-worker").GetGeneration()

	upgradeGroup := func(image string) error {
		gpu.ImageId = image
		c.spec.Cluster.Status, gpu.Status = "UPDATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"
		ctx, cancel := callCtx()
		defer cancel()
		_, err := driver.UpgradeCluster(ctx, &pb.UpgradeClusterRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: gpu.Uuid})
		return err
	}
	// Twice: a retry converges on the same release.
	for i := 0; i < 2; i++ {
		if err := upgradeGroup(c.spec.ClusterTemplate.ImageId); err != nil {
			t.Fatalf("UpgradeCluster --nodegroup gpu (call %d): %v", i+1, err)
		}
	}
	assertVersions(t, c, "v1.33.2", map[string]string{"default-worker": "v1.33.2", "gpu": "v1.33.2"})
	if g := machineDeployment(t, c, "default-worker").GetGeneration(); g != workers {
		t.Errorf("the default workers' MachineDeployment changed (generation %d, was %d)", g, workers)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)

	revisions := len(history(t, stack.Env.Config, projectNamespace(), c.spec.Cluster.StackId))
	for _, tt := range []struct{ version, want string }{
		{"v1.34.1", "1.34.1"},                       // newer than the control plane
		{"v1.32.5", "not a downgrade from v1.33.2"}, // back
	} {
		err := upgradeGroup(stack.Info.Images[tt.version])
		if s, _ := status.FromError(err); s.Code() != codes.InvalidArgument || !strings.Contains(s.Message(), tt.want) ||
			!strings.Contains(s.Message(), "gpu") {
			t.Errorf("upgrade of gpu to %s: %v, want InvalidArgument naming the group and %q", tt.version, err, tt.want)
		}
	}
	if n := len(history(t, stack.Env.Config, projectNamespace(), c.spec.Cluster.StackId)); n != revisions {
		t.Errorf("refused upgrades applied %d release revisions", n-revisions)
	}
	gpu.ImageId = c.spec.ClusterTemplate.ImageId // as Magnum still holds it
	assertVersions(t, c, "v1.33.2", map[string]string{"default-worker": "v1.33.2", "gpu": "v1.33.2"})
}

// assertVersions checks the Kubernetes version of the control plane and of
// each named node group's MachineDeployment.
func assertVersions(t *testing.T, c *cluster, controlPlane string, groups map[string]string) {
	t.Helper()
	var kcp unstructured.Unstructured
	kcp.SetGroupVersionKind(schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"})
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: projectNamespace(), Name: c.spec.Cluster.StackId + "-control-plane"}, &kcp); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version"); v != controlPlane {
		t.Errorf("the control plane's version is %q, want %s", v, controlPlane)
	}
	for group, want := range groups {
		md := machineDeployment(t, c, group)
		if v, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version"); v != want {
			t.Errorf("node group %s's MachineDeployment has version %q, want %s", group, v, want)
		}
	}
}

// machineDeployment is a node group's MachineDeployment, as the chart
// labels it (v1beta2).
func machineDeployment(t *testing.T, c *cluster, group string) *unstructured.Unstructured {
	t.Helper()
	return machineDeploymentAt(t, c, group, "v1beta2")
}

// machineDeploymentAt is machineDeployment read at an API version.
func machineDeploymentAt(t *testing.T, c *cluster, group, version string) *unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: version, Kind: "MachineDeploymentList"})
	if err := stack.Env.Client.List(context.Background(), list, client.InNamespace(projectNamespace()),
		client.MatchingLabels{"capi.stackhpc.com/cluster": c.spec.Cluster.StackId, "capi.stackhpc.com/node-group": group}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d MachineDeployments of node group %s", len(list.Items), group)
	}
	return &list.Items[0]
}
