package testchart

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	driverRelease   = "k8s-demo-0a1b2c3d4e5f"
	driverNamespace = "magnum-5e0a0f1c2d3b4a5968778695a4b3c2d1"
)

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return values
}

func renderFresh(t *testing.T, release string, values map[string]any) ([]*unstructured.Unstructured, error) {
	t.Helper()
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return Render(ch, release, driverNamespace, values)
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func findPrefix(objs []*unstructured.Unstructured, kind, prefix string) []*unstructured.Unstructured {
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && strings.HasPrefix(o.GetName(), prefix) {
			found = append(found, o)
		}
	}
	return found
}

// TestRenderDriverValues renders values shaped like the Magnum driver's and
// checks the fields Cluster API, CAPO, the addon provider and the driver's
// status code depend on.
func TestRenderDriverValues(t *testing.T) {
	objs, err := renderFresh(t, driverRelease, readYAML(t, filepath.Join("testdata", "driver-values.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	rel := driverRelease
	cpTemplates := findPrefix(objs, "OpenStackMachineTemplate", rel+"-control-plane-")
	workerTemplates := findPrefix(objs, "OpenStackMachineTemplate", rel+"-default-worker-")
	if len(cpTemplates) != 1 || len(workerTemplates) != 1 {
		t.Fatalf("want one control plane and one default-worker OpenStackMachineTemplate, got %d and %d", len(cpTemplates), len(workerTemplates))
	}
	cpTemplate, workerTemplate := cpTemplates[0].GetName(), workerTemplates[0].GetName()

	for _, tc := range []struct {
		name      string
		kind, obj string
		path      []string
		want      any
	}{
		{"credentials from the driver's Secret", "OpenStackCluster", rel, []string{"spec", "identityRef", "name"}, rel + "-cloud-credentials"},
		{"cloud is always openstack", "OpenStackCluster", rel, []string{"spec", "identityRef", "cloudName"}, "openstack"},
		{"load balancer provider", "OpenStackCluster", rel, []string{"spec", "apiServerLoadBalancer", "provider"}, "ovn"},
		{"allowed CIDRs", "OpenStackCluster", rel, []string{"spec", "apiServerLoadBalancer", "allowedCIDRs"}, []any{"10.0.0.0/8", "192.168.0.0/16"}},
		{"no floating IP", "OpenStackCluster", rel, []string{"spec", "disableAPIServerFloatingIP"}, true},
		{"external network", "OpenStackCluster", rel, []string{"spec", "externalNetwork", "id"}, "9a8b7c6d-1111-2222-3333-444455556666"},
		{"node subnet", "OpenStackCluster", rel, []string{"spec", "managedSubnets"}, []any{map[string]any{"cidr": "10.0.0.0/24", "dnsNameservers": []any{"1.1.1.1", "8.8.8.8"}}}},
		{"OVN opens NodePorts", "OpenStackCluster", rel, []string{"spec", "managedSecurityGroups", "workerNodesSecurityGroupRules"}, []any{
			map[string]any{"name": "Worker nodePort TCP", "protocol": "tcp", "remoteIPPrefix": "0.0.0.0/0", "direction": "ingress", "etherType": "IPv4", "portRangeMin": float64(30000), "portRangeMax": float64(32767)},
			map[string]any{"name": "Worker nodePort UDP", "protocol": "udp", "remoteIPPrefix": "0.0.0.0/0", "direction": "ingress", "etherType": "IPv4", "portRangeMin": float64(30000), "portRangeMax": float64(32767)},
		}},
		{"cluster network", "Cluster", rel, []string{"spec", "clusterNetwork", "pods", "cidrBlocks"}, []any{"172.16.0.0/13"}},
		{"control plane version", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "version"}, "v1.33.4"},
		{"control plane size", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "replicas"}, float64(3)},
		{"control plane machines", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "machineTemplate", "infrastructureRef", "name"}, cpTemplate},
		{"OIDC", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "apiServer", "extraArgs", "oidc-client-id"}, "kubernetes"},
		{"keystone webhook", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "kubeadmConfigSpec", "postKubeadmCommands"}, []any{
			"cp /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/keystone-auth/kube-apiserver.yaml",
			"kubectl kustomize /etc/kubernetes/keystone-auth -o /etc/kubernetes/manifests/kube-apiserver.yaml",
		}},
		{"etcd disk mounted", "KubeadmControlPlane", rel + "-control-plane", []string{"spec", "kubeadmConfigSpec", "mounts"}, []any{[]any{"LABEL=etcd_disk", "/var/lib/etcd"}}},
		{"control plane flavor", "OpenStackMachineTemplate", cpTemplate, []string{"spec", "template", "spec", "flavor"}, "m1.medium"},
		{"image by ID", "OpenStackMachineTemplate", cpTemplate, []string{"spec", "template", "spec", "image"}, map[string]any{"id": "3c1f1f7e-5a8a-4f6e-9d3b-6f2f9d1e2a10"}},
		{"keypair", "OpenStackMachineTemplate", cpTemplate, []string{"spec", "template", "spec", "sshKeyName"}, "ops-keypair"},
		{"boot volume", "OpenStackMachineTemplate", cpTemplate, []string{"spec", "template", "spec", "rootVolume"}, map[string]any{"sizeGiB": float64(40), "type": "fast-ssd", "availabilityZone": map[string]any{"from": "Machine"}}},
		{"etcd volume", "OpenStackMachineTemplate", cpTemplate, []string{"spec", "template", "spec", "additionalBlockDevices"}, []any{map[string]any{
			"name": "etcd", "sizeGiB": float64(20),
			"storage": map[string]any{"type": "Volume", "volume": map[string]any{"type": "fast-ssd", "availabilityZone": map[string]any{"from": "Machine"}}},
		}}},
		{"extra network in CAPO v1beta1 form", "OpenStackMachineTemplate", workerTemplate, []string{"spec", "template", "spec", "ports"}, []any{
			map[string]any{}, map[string]any{"network": map[string]any{"filter": map[string]any{"name": "storage-net"}}, "securityGroups": []any{}},
		}},
		{"fixed-size group", "MachineDeployment", rel + "-default-worker", []string{"spec", "replicas"}, float64(2)},
		{"group machines", "MachineDeployment", rel + "-default-worker", []string{"spec", "template", "spec", "infrastructureRef", "name"}, workerTemplate},
		{"group version", "MachineDeployment", rel + "-default-worker", []string{"spec", "template", "spec", "version"}, "v1.33.4"},
		{"autoscaled group leaves replicas to the autoscaler", "MachineDeployment", rel + "-gpu-workers", []string{"spec", "replicas"}, nil},
		{"autoscaler bounds", "MachineDeployment", rel + "-gpu-workers", []string{"metadata", "annotations"}, map[string]any{
			"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
			"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "4",
		}},
		{"group selector", "MachineDeployment", rel + "-gpu-workers", []string{"spec", "selector", "matchLabels"}, map[string]any{
			"capi.stackhpc.com/cluster": rel, "capi.stackhpc.com/component": "worker", "capi.stackhpc.com/node-group": "gpu-workers", "cluster.x-k8s.io/cluster-name": rel,
		}},
		{"control plane health check", "MachineHealthCheck", rel + "-control-plane", []string{"spec", "maxUnhealthy"}, float64(1)},
		{"group health check", "MachineHealthCheck", rel + "-gpu-workers", []string{"spec", "maxUnhealthy"}, "100%"},
		{"keystone auth addon", "HelmRelease", rel + "-k8s-keystone-auth", []string{"spec", "targetNamespace"}, "kube-system"},
		{"keystone auth values", "Secret", rel + "-k8s-keystone-auth-config", []string{"stringData", "overrides"}, "openstackAuthUrl: https://keystone.example.com/v3\nprojectId: 5e0a0f1c2d3b4a5968778695a4b3c2d1\n"},
		{"monitoring", "HelmRelease", rel + "-kube-prometheus-stack", []string{"spec", "chart", "name"}, "kube-prometheus-stack"},
		{"calico", "HelmRelease", rel + "-cni-calico", []string{"spec", "clusterName"}, rel},
		{"storage classes", "Manifests", rel + "-csi-cinder-storageclass", []string{"spec", "manifestSources"}, []any{
			map[string]any{"template": "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast-ssd\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: cinder.csi.openstack.org\nparameters:\n  availability: nova\n  type: fast-ssd\nreclaimPolicy: Retain\nallowVolumeExpansion: true\nvolumeBindingMode: WaitForFirstConsumer\n"},
			map[string]any{"template": "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\nprovisioner: cinder.csi.openstack.org\nparameters:\n  availability: nova\n  type: standard\nreclaimPolicy: Retain\nallowVolumeExpansion: true\nvolumeBindingMode: WaitForFirstConsumer\n"},
		}},
		{"autoscaler watches this cluster", "Deployment", rel + "-autoscaler", []string{"spec", "template", "spec", "volumes"}, []any{
			map[string]any{"name": "kubeconfig", "secret": map[string]any{"secretName": rel + "-kubeconfig"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := find(objs, tc.kind, tc.obj)
			if obj == nil {
				t.Fatalf("no %s %s", tc.kind, tc.obj)
			}
			got, _, err := unstructured.NestedFieldNoCopy(obj.Object, tc.path...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s %s .%s:\n%s", tc.kind, tc.obj, strings.Join(tc.path, "."), treeDiff(tc.want, got))
			}
		})
	}

	t.Run("no chart-made credentials or registry mirrors", func(t *testing.T) {
		if s := find(objs, "Secret", rel+"-cloud-credentials"); s != nil {
			t.Error("the chart made a credentials Secret although cloudCredentialsSecretName is given")
		}
		kcp := find(objs, "KubeadmControlPlane", rel+"-control-plane")
		files, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "files")
		for _, f := range files {
			if path, _ := f.(map[string]any)["path"].(string); strings.HasSuffix(path, "/hosts.toml") {
				t.Errorf("registryMirrors: null still writes %s", path)
			}
		}
	})
	t.Run("cloud.conf load balancer options", func(t *testing.T) {
		cc := find(objs, "Manifests", rel+"-cloud-config")
		sources, _, _ := unstructured.NestedSlice(cc.Object, "spec", "manifestSources")
		template := sources[0].(map[string]any)["template"].(string)
		for _, line := range []string{"    [LoadBalancer]\n", "    create-monitor=true\n", "    lb-method=SOURCE_IP_PORT\n", "    lb-provider=ovn\n", "    [BlockStorage]\n    ignore-volume-az=true\n"} {
			if !strings.Contains(template, line) {
				t.Errorf("cloud-config template lacks %q:\n%s", line, template)
			}
		}
	})
}
