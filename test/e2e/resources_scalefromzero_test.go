package e2e

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// TestScaleFromZero: with auto_scaling_enabled, a node group created as
// `openstack coe nodegroup create --min-nodes 0 --max-nodes 3 --node-count 0`
// on a vGPU flavor gets a MachineDeployment the cluster autoscaler can grow
// from zero: bounds 0–3 and the capacity annotations from the flavor (cpu,
// memory, disk, maxPods, one GPU, its kubelet labels and taints), which
// chart 0.27 cannot render and the sidecar's post-renderer adds. The default
// group, which is not autoscaled (its minimum, Magnum's default 0, becomes
// 1, its maximum the node count 1), gets none. A resize of the default group
// (a Helm upgrade) keeps the gpu group's annotations and rolls none of its
// machines; the default group, now autoscaled 1–2, gets its own, which a
// resize back to 1 (not autoscaled) removes. An upgrade to a new Kubernetes
// version (another Helm upgrade, which rolls every machine) keeps the gpu
// group's.
func TestScaleFromZero(t *testing.T) {
	t.Parallel()
	// A flavor of this test's own (a unique name, so no other test's look-up
	// of a flavor by name becomes ambiguous), as Nova shows a vGPU flavor.
	gpuFlavor := stack.OpenStack.AddFlavor(openstackfake.Flavor{Name: "g1.vgpu-" + uuid.NewString()[:8], RAM: 16384, VCPUs: 4, Disk: 40,
		ExtraSpecs: map[string]string{"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A10": "required"}})
	c := newCluster(t, "scale-zero", "v1.33.2", 1)
	c.spec.Cluster.Labels["auto_scaling_enabled"] = "true"
	min, max := int32(0), int32(3)
	gpu := &pb.NodeGroup{Uuid: uuid.NewString(), Name: "gpu", ClusterId: c.spec.Cluster.Uuid, ProjectId: c.spec.Cluster.ProjectId,
		Role: "worker", FlavorId: gpuFlavor.ID, ImageId: c.spec.ClusterTemplate.ImageId, NodeCount: 0, MinNodeCount: &min, MaxNodeCount: &max,
		NodeTaints: []*pb.NodeGroupTaint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
		NodeLabels: map[string]string{"example.com/accelerator": "a10"}, Status: "CREATE_IN_PROGRESS"}
	c.spec.Nodegroups = append(c.spec.Nodegroups, gpu)
	c.create(t, driver)
	cleanupCluster(t, c)

	wantGPU := map[string]string{
		"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0",
		"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "3",
		"capacity.cluster-autoscaler.kubernetes.io/cpu":               "4",
		"capacity.cluster-autoscaler.kubernetes.io/memory":            "16384Mi",
		"capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk":    "40Gi",
		"capacity.cluster-autoscaler.kubernetes.io/maxPods":           "110",
		"capacity.cluster-autoscaler.kubernetes.io/gpu-count":         "1",
		"capacity.cluster-autoscaler.kubernetes.io/gpu-type":          "nvidia.com/gpu",
		"capacity.cluster-autoscaler.kubernetes.io/labels":            "capi.stackhpc.com/node-group=gpu,example.com/accelerator=a10",
		"capacity.cluster-autoscaler.kubernetes.io/taints":            "nvidia.com/gpu=present:NoSchedule",
	}
	assertAnnotations(t, c, "gpu", wantGPU)
	assertAnnotations(t, c, "default-worker", nil)
	c.waitFor(t, "CREATE_COMPLETE", 4*time.Minute)
	if r := replicas(t, c, "gpu"); r != 0 {
		t.Errorf("the gpu group has %d replicas, want 0 (its minimum)", r)
	}
	gpuSets := machineSetNames(t, c, "gpu")

	// Resize the default group: a Helm upgrade that renders the annotations
	// again; it makes the default group autoscaled (1–2).
	ctx, cancel := callCtx()
	_, err := driver.ResizeCluster(ctx, c.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
	assertAnnotations(t, c, "gpu", wantGPU)
	assertAnnotations(t, c, "default-worker", defaultWorkerAnnotations(1, 2))
	if got := machineSetNames(t, c, "gpu"); got != gpuSets {
		t.Errorf("the resize rolled the gpu group: MachineSets %s, were %s", got, gpuSets)
	}

	// Back to one: the default group is no longer autoscaled (1–1) and
	// Helm removes the annotations the previous revision had.
	ctx, cancel = callCtx()
	_, err = driver.ResizeCluster(ctx, c.resizeRequest(1))
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster to 1: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
	assertAnnotations(t, c, "default-worker", nil)
	assertAnnotations(t, c, "gpu", wantGPU)

	// Upgrade Kubernetes: another Helm upgrade; the annotations stay.
	ctx, cancel = callCtx()
	_, err = driver.UpgradeCluster(ctx, c.upgradeRequest("v1.34.1"))
	cancel()
	if err != nil {
		t.Fatalf("UpgradeCluster: %v", err)
	}
	assertAnnotations(t, c, "gpu", wantGPU)
	c.waitFor(t, "UPDATE_COMPLETE", 6*time.Minute)
	assertAnnotations(t, c, "gpu", wantGPU)
	if v, _, _ := unstructured.NestedString(machineDeployment(t, c, "gpu").Object, "spec", "template", "spec", "version"); v != "v1.34.1" {
		t.Errorf("the gpu group's version is %q after the upgrade, want v1.34.1", v)
	}
}

// assertAnnotations checks the autoscaler annotations (bounds and capacity)
// of a node group's MachineDeployment; want nil means none.
func assertAnnotations(t *testing.T, c *cluster, group string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for k, v := range machineDeployment(t, c, group).GetAnnotations() {
		if strings.HasPrefix(k, "capacity.cluster-autoscaler.kubernetes.io/") || strings.HasPrefix(k, "cluster.x-k8s.io/cluster-api-autoscaler-") {
			got[k] = v
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("node group %s: MachineDeployment annotation %s = %q, want %q", group, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("node group %s: unexpected MachineDeployment annotation %s = %q", group, k, v)
		}
	}
}

// defaultWorkerAnnotations are the autoscaler annotations of the default
// worker group, on the test bed's default flavor, autoscaled min–max.
func defaultWorkerAnnotations(min, max int) map[string]string {
	return map[string]string{
		"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": strconv.Itoa(min),
		"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": strconv.Itoa(max),
		"capacity.cluster-autoscaler.kubernetes.io/cpu":               "2",
		"capacity.cluster-autoscaler.kubernetes.io/memory":            "4096Mi",
		"capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk":    "40Gi",
		"capacity.cluster-autoscaler.kubernetes.io/maxPods":           "110",
		"capacity.cluster-autoscaler.kubernetes.io/labels":            "capi.stackhpc.com/node-group=default-worker",
	}
}

// replicas is a node group's MachineDeployment's spec.replicas (-1 unset).
func replicas(t *testing.T, c *cluster, group string) int64 {
	t.Helper()
	r, found, _ := unstructured.NestedInt64(machineDeployment(t, c, group).Object, "spec", "replicas")
	if !found {
		return -1
	}
	return r
}

// machineSetNames are the names of a node group's MachineSets, joined: a
// roll makes a new one.
func machineSetNames(t *testing.T, c *cluster, group string) string {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachineSetList"})
	if err := stack.Env.Client.List(context.Background(), list, client.InNamespace(projectNamespace()),
		client.MatchingLabels{"cluster.x-k8s.io/deployment-name": machineDeployment(t, c, group).GetName()}); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(list.Items))
	for _, ms := range list.Items {
		names = append(names, ms.GetName())
	}
	if len(names) == 0 {
		t.Fatalf("node group %s has no MachineSet", group)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
