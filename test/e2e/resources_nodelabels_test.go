package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestNodeLabelsAndTaints: node labels and taints reach the kubelet settings
// of each worker node group's KubeadmConfigTemplate, the one its
// MachineDeployment uses, in both forms a cloud sends them: the labels
// node_labels/node_taints (Magnum 15–22, here the cluster's, copied into its
// default node groups as Magnum does) and Magnum 23's NodeGroup fields (on a
// second node group, with a node_labels label of its own that replaces the
// cluster's; it has no node_taints label, so the cluster's taints apply).
// The cluster then comes up. A bad taint on a new node group and a label
// kubelet refuses on a new cluster are refused naming the field or label and
// the value, and change nothing.
func TestNodeLabelsAndTaints(t *testing.T) {
	t.Parallel()
	ns := projectNamespace()
	c := newCluster(t, "node-labels", "v1.33.2", 1)
	c.spec.Cluster.Labels["node_labels"] = "tier=web"
	c.spec.Cluster.Labels["node_taints"] = "spot:PreferNoSchedule"
	for _, ng := range c.spec.Nodegroups {
		ng.Labels = cloneLabels(c.spec.Cluster.Labels)
	}
	gpu := proto.Clone(c.nodegroup("default-worker")).(*pb.NodeGroup)
	gpu.Uuid, gpu.Name, gpu.IsDefault = uuid.NewString(), "gpu", false
	gpu.Labels = map[string]string{"node_labels": "tier=batch"}
	gpu.NodeLabels = map[string]string{"example.com/gpu": "a100", "node.kubernetes.io/pool": "gpu"}
	gpu.NodeTaints = []*pb.NodeGroupTaint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}
	c.spec.Nodegroups = append(c.spec.Nodegroups, gpu)
	stackID := c.create(t, driver)
	cleanupCluster(t, c)

	want := map[string]harness.NodeRegistration{
		"default-worker": {Labels: "capi.stackhpc.com/node-group=default-worker,tier=web",
			Taints: []any{map[string]any{"key": "spot", "effect": "PreferNoSchedule"}}},
		"gpu": {Labels: "capi.stackhpc.com/node-group=gpu,example.com/gpu=a100,node.kubernetes.io/pool=gpu,tier=batch",
			Taints: []any{map[string]any{"key": "spot", "effect": "PreferNoSchedule"}, map[string]any{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}}},
	}
	for group, w := range want {
		got, err := harness.JoinRegistration(context.Background(), stack.Env.Client, ns, stackID, group)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("node group %s: kubelet node-labels %q taints %v, want %q %v", group, got.Labels, got.Taints, w.Labels, w.Taints)
		}
	}
	c.waitFor(t, "CREATE_COMPLETE", 4*time.Minute)

	// A new node group with a bad taint: refused, nothing applied.
	before, revisions := footprintOf(t, c.owner()), len(history(t, stack.Env.Config, ns, stackID))
	bad := proto.Clone(gpu).(*pb.NodeGroup)
	bad.Uuid, bad.Name, bad.Status = uuid.NewString(), "bad", "CREATE_IN_PROGRESS"
	bad.NodeTaints = []*pb.NodeGroupTaint{{Key: "nvidia.com/gpu", Effect: "Sometimes"}}
	c.spec.Nodegroups = append(c.spec.Nodegroups, bad)
	ctx, cancel := callCtx()
	_, err := driver.CreateNodeGroup(ctx, &pb.CreateNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: bad.Uuid})
	cancel()
	expectRefusal(t, err, "nodegroups[bad].node_taints[0].effect", "Sometimes", "NoSchedule, PreferNoSchedule or NoExecute")
	c.spec.Nodegroups = c.spec.Nodegroups[:len(c.spec.Nodegroups)-1]
	if diff := before.changes(footprintOf(t, c.owner())); len(diff) > 0 {
		t.Errorf("the refused node group changed:\n%s", strings.Join(diff, "\n"))
	}
	if n := len(history(t, stack.Env.Config, ns, stackID)); n != revisions {
		t.Errorf("the refused node group made a release revision (%d, was %d)", n, revisions)
	}

	// A new cluster whose node_labels label kubelet would refuse.
	refused := newCluster(t, "node-labels-refused", "v1.33.2", 1)
	refused.spec.ClusterTemplate.Labels["node_labels"] = "node-role.kubernetes.io/worker="
	before = footprintOf(t, refused.owner())
	ctx, cancel = callCtx()
	_, err = driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: refused.ctx, Spec: refused.spec, Certificates: refused.certs})
	cancel()
	expectRefusal(t, err, "labels.node_labels", "node-role.kubernetes.io/worker", "a label kubelet may set on its node")
	if diff := before.changes(footprintOf(t, refused.owner())); len(diff) > 0 {
		t.Errorf("the refused cluster changed:\n%s", strings.Join(diff, "\n"))
	}
	c.remove(t, driver)
}

// expectRefusal checks err is InvalidArgument (Magnum's
// InvalidParameterValue) and its message names every part, in order.
func expectRefusal(t *testing.T, err error, parts ...string) {
	t.Helper()
	s, _ := status.FromError(err)
	rest := s.Message()
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("refusal %v: want InvalidArgument naming %q in order", err, parts)
			return
		}
		rest = rest[i+len(p):]
	}
	if s.Code() != codes.InvalidArgument {
		t.Errorf("refusal %v: code %s, want InvalidArgument", err, s.Code())
	}
}

func cloneLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
