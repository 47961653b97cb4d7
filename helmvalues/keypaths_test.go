package helmvalues

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// commentedKeys are keys chart 0.27 reads although its values.yaml shows them
// only in comments (or not at all). Each entry says where the chart reads it.
var commentedKeys = map[string]string{
	"apiServer.allowedCIDRs":                               "commented example; templates/cluster-openstack.yaml apiServerLoadBalancer.allowedCIDRs",
	"etcd.blockDevice.size":                                "commented; control-plane/openstack-machine-template.yaml additionalBlockDevices",
	"etcd.blockDevice.type":                                "commented; same",
	"etcd.blockDevice.volumeType":                          "commented; same",
	"etcd.blockDevice.availabilityZone":                    "commented; same",
	"controlPlane.machineRootVolume.volumeType":            "commented; control-plane/openstack-machine-template.yaml rootVolume.type",
	"controlPlane.machineRootVolume.availabilityZone":      "commented; same",
	"nodeGroupDefaults.machineRootVolume.volumeType":       "commented; node-group/openstack-machine-template.yaml rootVolume.type",
	"nodeGroupDefaults.machineRootVolume.availabilityZone": "commented; same",
	"nodeGroups[].machineRootVolume.volumeType":            "commented in nodeGroupDefaults; node-group/openstack-machine-template.yaml",
	"nodeGroups[].machineRootVolume.availabilityZone":      "commented in nodeGroupDefaults; same",
	"clusterNetworking.internalNetwork.networkFilter.id":   "commented; templates/_helpers.tpl convert.neutronFilter",
	"clusterNetworking.internalNetwork.subnetFilter.id":    "commented; same",
	"nodeGroups[].machineCountMin":                         "commented in the default node group; node-group/machine-deployment.yaml",
	"nodeGroups[].machineCountMax":                         "commented in the default node group; same",
}

// passThrough are subtrees whose content another schema defines; the walker
// does not descend into them.
var passThrough = map[string]string{
	"controlPlane.kubeadmConfigSpec":                                   "CAPI v1beta1 KubeadmConfigSpec, checked by assertKubeadmSchema",
	"nodeGroupDefaults.kubeadmConfigSpec":                              "same",
	"nodeGroups[].kubeadmConfigSpec":                                   "same",
	"nodeGroupDefaults.machineNetworking.ports":                        "CAPO port options (v1alpha7-style filters converted by the chart)",
	"registryMirrors":                                                  "registry host → mirror URLs",
	"trustedCAs":                                                       "name → PEM",
	"controlPlane.nodeLabels":                                          "Kubernetes node labels",
	"nodeGroups[].nodeLabels":                                          "Kubernetes node labels",
	"addons.openstack.cloudConfig":                                     "sections and keys of OCCM's cloud.conf (openstack/cloud-config.yaml renders any)",
	"addons.openstack.k8sKeystoneAuth.values":                          "values of the k8s-keystone-auth chart",
	"addons.openstack.csiCinder.defaultStorageClass.allowedTopologies": "StorageClass allowedTopologies",
	"nodeGroups[].additionalBlockDevices":                              "block device name → device (commented example of controlPlane.additionalBlockDevices)",
	"clusterNetworking.workerNodesSecurityGroupRules":                  "CAPO SecurityGroupRuleSpec list",
	"addons.cni.cilium.release.values":                                 "values of the cilium chart",
	"addons.openstack.csiManila.defaultStorageClass.parameters":        "StorageClass parameters of the Manila CSI driver",
	"addons.custom":                                                    "custom addons by name (templates/custom-addons.yaml): the csi-nfs HelmRelease of NFS shares",
	// The addons' own charts' values, where placement.go places system pods.
	"addons.metricsServer.release.values":                  "values of the metrics-server chart",
	"addons.ingress.nginx.release.values":                  "values of the ingress-nginx chart",
	"addons.ingress.traefik.release.values":                "values of the traefik chart",
	"addons.monitoring.kubePrometheusStack.release.values": "values of the kube-prometheus-stack chart",
	"addons.monitoring.lokiStack.release.values":           "values of the loki-stack chart",
	"addons.monitoring.blackboxExporter.release.values":    "values of the prometheus-blackbox-exporter chart",
	"addons.openstack.csiManila.values":                    "values of the openstack-manila-csi chart",
	"addons.csi.cephfs.release.values":                     "values of the ceph-csi-cephfs chart",
}

var (
	chartRefOnce sync.Once
	chartRef     map[string]any
	chartRefErr  error
)

// chartValues is the reference tree: openstack-cluster's values with the
// cluster-addons subchart's values under addons (the parent's addons values
// override the subchart's, as Helm does).
func chartValues(t testing.TB) map[string]any {
	t.Helper()
	chartRefOnce.Do(func() {
		var parent, addons map[string]any
		for file, into := range map[string]*map[string]any{"openstack-cluster-values.yaml": &parent, "cluster-addons-values.yaml": &addons} {
			data, err := os.ReadFile(filepath.Join("testdata", "chart-0.27.0", file))
			if err != nil {
				chartRefErr = err
				return
			}
			if err := yaml.Unmarshal(data, into); err != nil {
				chartRefErr = err
				return
			}
		}
		merge(addons, parent["addons"].(map[string]any))
		parent["addons"] = addons
		chartRef = parent
	})
	if chartRefErr != nil {
		t.Fatal(chartRefErr)
	}
	return chartRef
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// unknownChartKeys lists the emitted key paths chart 0.27 does not read.
func unknownChartKeys(t testing.TB, values map[string]any) []string {
	ref := chartValues(t)
	nodeGroupItem := map[string]any{"name": nil, "machineCount": nil}
	merge(nodeGroupItem, ref["nodeGroupDefaults"].(map[string]any))
	scItem := map[string]any{}
	for k, v := range ref["addons"].(map[string]any)["openstack"].(map[string]any)["csiCinder"].(map[string]any)["defaultStorageClass"].(map[string]any) {
		if k != "enabled" && k != "isClusterDefault" {
			scItem[k] = v
		}
	}
	listItems := map[string]map[string]any{
		"nodeGroups": nodeGroupItem,
		"addons.openstack.csiCinder.additionalStorageClasses": scItem,
	}

	var bad []string
	var walk func(node, ref any, path string)
	walk = func(node, ref any, path string) {
		if _, ok := passThrough[path]; ok {
			return
		}
		switch v := node.(type) {
		case map[string]any:
			refMap, _ := ref.(map[string]any)
			for key, child := range v {
				p := joinPath(path, key)
				refChild, inRef := refMap[key]
				_, commented := commentedKeys[p]
				_, passes := passThrough[p]
				if !inRef && !commented && !passes {
					bad = append(bad, p)
					continue
				}
				walk(child, refChild, p)
			}
		case []any:
			item, keyed := listItems[path]
			for _, child := range v {
				switch c := child.(type) {
				case map[string]any:
					if !keyed {
						bad = append(bad, path+"[] (a list of maps the chart does not describe)")
						continue
					}
					walk(c, item, path+"[]")
				case []any:
					bad = append(bad, path+"[] (nested list)")
				}
			}
		}
	}
	walk(values, ref, "")
	sort.Strings(bad)
	return bad
}

func assertChartKeys(t *testing.T, values map[string]any) {
	t.Helper()
	if bad := unknownChartKeys(t, values); len(bad) > 0 {
		t.Errorf("keys chart %s does not read:\n  %s", ChartVersion, strings.Join(bad, "\n  "))
	}
}

// TestChartKeyWalker makes sure the walker itself catches stale keys, such as
// those the StackHPC driver still sends.
func TestChartKeyWalker(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		bad    []string
	}{
		{"current keys", map[string]any{"apiServer": map[string]any{"allowedCIDRs": []any{"10.0.0.0/8"}}, "nodeGroups": []any{map[string]any{"name": "a-b", "machineCountMin": 1}}}, nil},
		{"old allowedCidrs spelling", map[string]any{"apiServer": map[string]any{"allowedCidrs": []any{"10.0.0.0/8"}}}, []string{"apiServer.allowedCidrs"}},
		{"removed dashboard", map[string]any{"addons": map[string]any{"kubernetesDashboard": map[string]any{"enabled": true}}}, []string{"addons.kubernetesDashboard"}},
		{"deprecated dnsNameservers", map[string]any{"clusterNetworking": map[string]any{"dnsNameservers": []any{"8.8.8.8"}}}, []string{"clusterNetworking.dnsNameservers"}},
		{"typo inside a node group", map[string]any{"nodeGroups": []any{map[string]any{"name": "a-b", "machineFlavour": "x"}}}, []string{"nodeGroups[].machineFlavour"}},
		{"typo in a storage class", map[string]any{"addons": map[string]any{"openstack": map[string]any{"csiCinder": map[string]any{"additionalStorageClasses": []any{map[string]any{"reclaim": "Retain"}}}}}}, []string{"addons.openstack.csiCinder.additionalStorageClasses[].reclaim"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unknownChartKeys(t, tt.values)
			if strings.Join(got, ",") != strings.Join(tt.bad, ",") {
				t.Errorf("unknownChartKeys = %q, want %q", got, tt.bad)
			}
		})
	}
}
