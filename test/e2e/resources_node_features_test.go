package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// TestNodeFeatureLabels: one Cilium cluster using kubelet_extra_args (the
// cluster's, and the default worker group's own over it), a containerd
// volume (docker_volume_size), extra worker security group rules, Hubble,
// the GPU operator switches and Manila NFS shares on a share network. The
// real Cluster API controllers' objects carry them: the worker group's
// KubeadmConfigTemplate kubelet flags, its OpenStackMachineTemplate's block
// device, the OpenStackCluster's rules; the release's values and the addon
// provider's objects the chart made carry the addon settings
// (checkAddonObjects). A node group deployed without a containerd volume
// keeps none when the template's docker_volume_size changes. A cluster with
// a kubelet flag outside the allowlist is refused naming it, and nothing is
// written.
func TestNodeFeatureLabels(t *testing.T) {
	t.Parallel() // its own cluster; with the other parallel tests, after the sequential ones
	ns := projectNamespace()
	c := newCluster(t, "node-features", "v1.33.2", 1)
	labels := map[string]string{
		"capi_network_driver":         "cilium",
		"kubelet_extra_args":          "max-pods=150,kube-reserved=cpu=200m,memory=512Mi",
		"extra_security_group_rules":  "tcp:30000-32767:0.0.0.0/0,icmp::10.0.0.0/8",
		"cilium_hubble_ui_enabled":    "true",
		"nvidia_gpu_operator_enabled": "false",
		"amd_gpu_operator_enabled":    "true",
		"manila_csi_enabled":          "true",
		"manila_csi_share_network_id": "0b3c1c9e-5f1a-4d2b-8c7e-3a9f6e2d1b40",
		"manila_csi_share_type":       "nfs-servers",
	}
	for k, v := range labels {
		c.spec.Cluster.Labels[k] = v
	}
	size := int32(30)
	for _, ng := range c.spec.Nodegroups {
		ng.Labels = cloneLabels(c.spec.Cluster.Labels)
		if ng.Name == "default-worker" {
			ng.Labels["kubelet_extra_args"] = "max-pods=60,image-gc-high-threshold=90"
			ng.DockerVolumeSize = proto.Int32(size)
		}
	}
	plain := proto.Clone(c.nodegroup("default-worker")).(*pb.NodeGroup)
	plain.Uuid, plain.Name, plain.IsDefault, plain.DockerVolumeSize = uuid.NewString(), "plain", false, nil
	plain.Labels = cloneLabels(c.spec.Cluster.Labels)
	c.spec.Nodegroups = append(c.spec.Nodegroups, plain)
	stackID := c.create(t, driver)
	cleanupCluster(t, c)

	ctx := context.Background()
	md := getObject(t, ctx, "cluster.x-k8s.io", "MachineDeployment", ns, stackID+"-default-worker")
	kctName, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	kct := getObject(t, ctx, "bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate", ns, kctName)
	args, _, _ := unstructured.NestedStringMap(kct.Object, "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs")
	for flag, want := range map[string]string{"max-pods": "60", "image-gc-high-threshold": "90", "kube-reserved": "cpu=200m,memory=512Mi", "cloud-provider": "external"} {
		if args[flag] != want {
			t.Errorf("worker kubeletExtraArgs[%s] = %q, want %q (all: %v)", flag, args[flag], want, args)
		}
	}
	mounts, _, _ := unstructured.NestedSlice(kct.Object, "spec", "template", "spec", "mounts")
	if !reflect.DeepEqual(mounts, []any{[]any{"LABEL=containerd_disk", "/var/lib/containerd"}}) {
		t.Errorf("worker mounts %v, want the containerd volume on /var/lib/containerd", mounts)
	}
	osmtName, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	osmt := getObject(t, ctx, "infrastructure.cluster.x-k8s.io", "OpenStackMachineTemplate", ns, osmtName)
	devices, _, _ := unstructured.NestedSlice(osmt.Object, "spec", "template", "spec", "additionalBlockDevices")
	if len(devices) != 1 || devices[0].(map[string]any)["name"] != "containerd" || devices[0].(map[string]any)["sizeGiB"] != int64(size) {
		t.Errorf("worker additionalBlockDevices %v, want one 30 GiB device named containerd", devices)
	}
	kcp := getObject(t, ctx, "controlplane.cluster.x-k8s.io", "KubeadmControlPlane", ns, stackID+"-control-plane")
	cpArgs, _, _ := unstructured.NestedStringMap(kcp.Object, "spec", "kubeadmConfigSpec", "initConfiguration", "nodeRegistration", "kubeletExtraArgs")
	if cpArgs["max-pods"] != "150" {
		t.Errorf("control plane kubeletExtraArgs %v, want the cluster's max-pods=150", cpArgs)
	}
	osc := getObject(t, ctx, "infrastructure.cluster.x-k8s.io", "OpenStackCluster", ns, stackID)
	rules, _, _ := unstructured.NestedSlice(osc.Object, "spec", "managedSecurityGroups", "workerNodesSecurityGroupRules")
	var names []string
	for _, r := range rules {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ";") != "extra tcp 30000-32767 from 0.0.0.0/0;extra icmp from 10.0.0.0/8" {
		t.Errorf("worker security group rules %v", rules)
	}

	revs := history(t, stack.Env.Config, ns, stackID)
	values := revs[len(revs)-1].Config
	for path, want := range map[string]any{
		"addons.cni.cilium.release.values.hubble.ui.enabled":                       true,
		"addons.cni.cilium.release.values.hubble.relay.enabled":                    true,
		"addons.nvidiaGPUOperator.enabled":                                         false,
		"addons.amdGPUOperator.enabled":                                            true,
		"addons.openstack.csiManila.defaultStorageClass.parameters.shareNetworkID": "0b3c1c9e-5f1a-4d2b-8c7e-3a9f6e2d1b40",
	} {
		if got := valueAt(values, path); got != want {
			t.Errorf("release value %s = %v, want %v", path, got, want)
		}
	}
	checkAddonObjects(t, ctx, ns, stackID)

	// The template's docker_volume_size changes under a node group deployed
	// without a volume: a resize keeps it without one, so it does not roll.
	plainMD := getObject(t, ctx, "cluster.x-k8s.io", "MachineDeployment", ns, stackID+"-plain")
	plainMachines, _, _ := unstructured.NestedString(plainMD.Object, "spec", "template", "spec", "infrastructureRef", "name")
	c.spec.ClusterTemplate.DockerVolumeSize = proto.Int32(20)
	resize(t, c, 2, nil)
	if n := len(history(t, stack.Env.Config, ns, stackID)); n != len(revs)+1 {
		t.Fatalf("the resize made %d release revisions, want 1", n-len(revs))
	}
	plainMD = getObject(t, ctx, "cluster.x-k8s.io", "MachineDeployment", ns, stackID+"-plain")
	if got, _, _ := unstructured.NestedString(plainMD.Object, "spec", "template", "spec", "infrastructureRef", "name"); got != plainMachines {
		t.Errorf("node group plain moved to machine template %s (was %s): a deployed group without a volume got one", got, plainMachines)
	}

	// A new cluster with a kubelet flag a tenant may not set.
	refused := newCluster(t, "node-features-refused", "v1.33.2", 1)
	refused.spec.ClusterTemplate.Labels["kubelet_extra_args"] = "max-pods=100,root-dir=/srv"
	before := footprintOf(t, refused.owner())
	callCtx, cancel := callCtx()
	_, err := driver.CreateCluster(callCtx, &pb.CreateClusterRequest{Context: refused.ctx, Spec: refused.spec, Certificates: refused.certs})
	cancel()
	expectRefusal(t, err, "labels.kubelet_extra_args", "root-dir=/srv", `flag "root-dir" is not one a tenant may set`)
	if diff := before.changes(footprintOf(t, refused.owner())); len(diff) > 0 {
		t.Errorf("the refused cluster changed:\n%s", strings.Join(diff, "\n"))
	}
	c.remove(t, driver)
}

func getObject(t *testing.T, ctx context.Context, group, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: kind})
	if err := stack.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("%s %s/%s: %v", kind, ns, name, err)
	}
	return obj
}

// valueAt reads a dotted path of Helm values.
func valueAt(values map[string]any, path string) any {
	var node any = values
	for _, key := range strings.Split(path, ".") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[key]
	}
	return node
}
