package helmvalues

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestBuildGolden renders every testdata/build/<case>.json (with the optional
// <case>.config.yaml) and compares the outcome with <case>.golden.yaml.
func TestBuildGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "build", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			res, err := Build(readInput(t, path), readConfig(t, path))
			assertGolden(t, strings.TrimSuffix(path, ".json")+".golden.yaml", renderOutcome(t, res, err))
			if err == nil {
				assertChartKeys(t, res.Values)
				assertKubeadmSchema(t, res.Values)
			}
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	path := filepath.Join("testdata", "build", "full.json")
	in, cfg := readInput(t, path), readConfig(t, path)
	first, err := Build(in, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := yaml.Marshal(first.Values)
	for i := 0; i < 20; i++ {
		again, err := Build(in, cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := yaml.Marshal(again.Values)
		if !bytes.Equal(want, got) {
			t.Fatalf("run %d rendered different values", i)
		}
	}
}

// TestBuildErrorsAreTyped checks that every problem of a joined error stays
// reachable as its class, so server/errors.go maps it to the right code.
func TestBuildErrorsAreTyped(t *testing.T) {
	in := minimalInput(t)
	in.Cluster.Labels = map[string]string{"boot_volume_size": "big", "auto_healing_enabled": "maybe"}
	in.ClusterTemplate.NetworkDriver = "weave"
	cfg := DefaultConfig()
	cfg.LabelDefaults = map[string]string{"monitoring_enabled": "perhaps"}

	_, err := Build(in, cfg)
	if err == nil {
		t.Fatal("Build accepted invalid input")
	}
	var fieldErr *FieldError
	if !errors.As(err, &fieldErr) || !fieldErr.InvalidArgument() {
		t.Fatalf("no *FieldError in %v", err)
	}
	var configErr *ConfigError
	if !errors.As(err, &configErr) || !configErr.FailedPrecondition() {
		t.Fatalf("no *ConfigError in %v", err)
	}
	got := splitErrors(err)
	for _, want := range []string{
		`labels.boot_volume_size: invalid value "big"`,
		`labels.auto_healing_enabled: invalid value "maybe"`,
		`cluster_template.network_driver: invalid value "weave": expected calico or cilium`,
		`driver configuration values.labelDefaults.monitoring_enabled`,
	} {
		found := false
		for _, msg := range got {
			found = found || strings.Contains(msg, want)
		}
		if !found {
			t.Errorf("missing %q in %q", want, got)
		}
	}
	if line := OneLine(err); strings.Contains(line, "\n") || !strings.Contains(line, "; ") {
		t.Errorf("OneLine(%v) = %q", err, line)
	}
}

func TestBuildTable(t *testing.T) {
	type check func(t *testing.T, res Result, err error)
	valueAt := func(path string, want any) check {
		return func(t *testing.T, res Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			got, ok := lookup(res.Values, strings.Split(path, ".")...)
			if !ok {
				t.Fatalf("%s is not set", path)
			}
			g, _ := yaml.Marshal(got)
			w, _ := yaml.Marshal(want)
			if !bytes.Equal(g, w) {
				t.Errorf("%s = %s, want %s", path, g, w)
			}
		}
	}
	absent := func(path string) check {
		return func(t *testing.T, res Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := lookup(res.Values, strings.Split(path, ".")...); ok {
				t.Errorf("%s = %v, want it unset", path, v)
			}
		}
	}
	annotates := func(group string, want map[string]string) check {
		return func(t *testing.T, res Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			if got := res.MachineAnnotations[group]; !reflect.DeepEqual(got, want) {
				t.Errorf("MachineDeployment annotations of %s = %v, want %v", group, got, want)
			}
		}
	}
	failsOn := func(field string) check {
		return func(t *testing.T, res Result, err error) {
			t.Helper()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want a FieldError on %s, got %v", field, err)
			}
			for _, msg := range splitErrors(err) {
				if strings.HasPrefix(msg, field+":") {
					return
				}
			}
			t.Errorf("no error on %s in %q", field, splitErrors(err))
		}
	}
	warns := func(substring string) check {
		return func(t *testing.T, res Result, err error) {
			t.Helper()
			for _, w := range res.Warnings {
				if strings.Contains(w, substring) {
					return
				}
			}
			t.Errorf("no warning containing %q in %q", substring, res.Warnings)
		}
	}
	intp := func(n int) *int { return &n }
	boolp := func(v bool) *bool { return &v }
	worker := func(in *Input) *NodeGroup { return &in.NodeGroups[1] }

	tests := []struct {
		name   string
		modify func(in *Input, cfg *Config)
		checks []check
	}{
		{"cluster labels override template labels", func(in *Input, cfg *Config) {
			in.ClusterTemplate.Labels = map[string]string{"boot_volume_size": "20", "monitoring_enabled": "true"}
			in.Cluster.Labels = map[string]string{"boot_volume_size": "40"}
		}, []check{valueAt("controlPlane.machineRootVolume.diskSize", 40), valueAt("addons.monitoring.enabled", true)}},
		{"site defaults sit below template labels", func(in *Input, cfg *Config) {
			cfg.LabelDefaults = map[string]string{"boot_volume_size": "30", "octavia_provider": "ovn"}
			in.ClusterTemplate.Labels = map[string]string{"octavia_provider": "amphora"}
		}, []check{valueAt("nodeGroupDefaults.machineRootVolume.diskSize", 30), valueAt("apiServer.loadBalancerProvider", "amphora")}},
		{"empty label falls back to the default", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_healing_enabled": ""}
		}, []check{valueAt("controlPlane.healthCheck.enabled", true)}},
		{"calico network driver", func(in *Input, cfg *Config) { in.ClusterTemplate.NetworkDriver = "calico" },
			[]check{valueAt("addons.cni.type", "calico")}},
		{"empty network driver means chart default", func(in *Input, cfg *Config) { in.ClusterTemplate.NetworkDriver = "" },
			[]check{absent("addons.cni"), warns("network_driver (none)")}},
		{"unknown network driver", func(in *Input, cfg *Config) { in.ClusterTemplate.NetworkDriver = "Calico" },
			[]check{failsOn("cluster_template.network_driver")}},
		{"missing stack id", func(in *Input, cfg *Config) { in.Cluster.StackID = "" },
			[]check{failsOn("cluster.stack_id")}},
		{"stack id longer than ReleaseName makes", func(in *Input, cfg *Config) { in.Cluster.StackID = strings.Repeat("a", 44) },
			[]check{failsOn("cluster.stack_id")}},
		{"missing kube_version", func(in *Input, cfg *Config) { in.Image.KubeVersion = "" },
			[]check{failsOn("image.kube_version")}},
		{"numeric flavor id would render as a number", func(in *Input, cfg *Config) { worker(in).FlavorID = "2" },
			[]check{failsOn("nodegroups[default-worker].flavor_id")}},
		{"worker flavor falls back to the cluster", func(in *Input, cfg *Config) { worker(in).FlavorID = ""; in.Cluster.FlavorID = "m1.large" },
			[]check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.large", "machineCount": 2}})}},
		{"no master node group uses master_count", func(in *Input, cfg *Config) {
			in.NodeGroups = in.NodeGroups[1:]
			in.Cluster.MasterCount = 3
		}, []check{valueAt("controlPlane.machineCount", 3)}},
		{"even control plane warns", func(in *Input, cfg *Config) { in.NodeGroups[0].NodeCount = 2 },
			[]check{warns("even count")}},
		{"no control plane nodes", func(in *Input, cfg *Config) { in.NodeGroups[0].NodeCount = 0 },
			[]check{failsOn("nodegroups[default-master].node_count")}},
		{"no workers still sends an empty list", func(in *Input, cfg *Config) { in.NodeGroups = in.NodeGroups[:1] },
			[]check{valueAt("nodeGroups", []any{})}},
		{"deleting node groups are left out", func(in *Input, cfg *Config) { worker(in).Status = "DELETE_IN_PROGRESS" },
			[]check{valueAt("nodeGroups", []any{})}},
		{"node groups colliding after sanitizing", func(in *Input, cfg *Config) {
			in.NodeGroups = append(in.NodeGroups, in.NodeGroups[1])
			in.NodeGroups[2].Name = "Default_Worker"
		}, []check{failsOn("nodegroups[Default_Worker].name")}},
		{"autoscaling raises min 0 to 1", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true"}
			worker(in).MinNodeCount, worker(in).MaxNodeCount = intp(0), intp(5)
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "autoscale": true, "machineCountMin": 1, "machineCountMax": 5}}), warns("raised to 1")}},
		{"autoscaling label min 0 scales from zero with the flavor's capacity", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "min_node_count": "0", "max_node_count": "4"}
			in.Flavors = map[string]Flavor{"m1.medium": {ID: "3", Name: "m1.medium", VCPUs: 2, RAMMiB: 4096, DiskGiB: 40}}
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "autoscale": true, "machineCountMin": 0, "machineCountMax": 4}}),
			annotates("default-worker", map[string]string{CapacityCPU: "2", CapacityMemory: "4096Mi", CapacityEphemeralDisk: "40Gi", CapacityMaxPods: "110",
				CapacityLabels: "capi.stackhpc.com/node-group=default-worker"})}},
		{"autoscaling label min 0 without the flavor's capacity is raised", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "min_node_count": "0", "max_node_count": "4"}
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "autoscale": true, "machineCountMin": 1, "machineCountMax": 4}}),
			warns("the flavor was not looked up"), annotates("default-worker", nil)}},
		{"node group min 0 with a max scales from zero, boot volume as its disk", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "boot_volume_size": "60"}
			in.Flavors = map[string]Flavor{"g1": {ID: "g1", Name: "g1", VCPUs: 8, RAMMiB: 32768, DiskGiB: 20, ExtraSpecs: map[string]string{"resources:VGPU": "1"}}}
			in.NodeGroups = append(in.NodeGroups, NodeGroup{Name: "gpu", Role: "worker", FlavorID: "g1", NodeCount: 0, MinNodeCount: intp(0), MaxNodeCount: intp(3)})
		}, []check{annotates("gpu", map[string]string{CapacityCPU: "8", CapacityMemory: "32768Mi", CapacityEphemeralDisk: "60Gi", CapacityMaxPods: "110",
			CapacityGPUCount: "1", CapacityGPUType: "nvidia.com/gpu", CapacityLabels: "capi.stackhpc.com/node-group=gpu"})}},
		{"node group min 0 without a max is Magnum's default: raised", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true"}
			in.Flavors = map[string]Flavor{"g1": {ID: "g1", Name: "g1", VCPUs: 8, RAMMiB: 32768}}
			in.NodeGroups = append(in.NodeGroups, NodeGroup{Name: "gpu", Role: "worker", FlavorID: "g1", NodeCount: 3, MinNodeCount: intp(0)})
		}, []check{warns(`node group "gpu": autoscaling minimum 0 is raised to 1: that is Magnum's default; a node group with a max_node_count too (--max-nodes) scales from zero`),
			annotates("gpu", map[string]string{CapacityCPU: "8", CapacityMemory: "32768Mi", CapacityMaxPods: "110", CapacityLabels: "capi.stackhpc.com/node-group=gpu"})}},
		{"a flavor with a bad GPU extra spec is refused for an autoscaled group", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true"}
			in.Flavors = map[string]Flavor{"g1": {ID: "g1", Name: "g1", VCPUs: 8, RAMMiB: 32768, ExtraSpecs: map[string]string{"resources:VGPU": "one"}}}
			in.NodeGroups = append(in.NodeGroups, NodeGroup{Name: "gpu", Role: "worker", FlavorID: "g1", NodeCount: 1, MinNodeCount: intp(0), MaxNodeCount: intp(3)})
		}, []check{failsOn("nodegroups[gpu].flavor_id")}},
		{"a flavor with a bad GPU extra spec is fine when not autoscaled", func(in *Input, cfg *Config) {
			in.Flavors = map[string]Flavor{"g1": {ID: "g1", Name: "g1", VCPUs: 8, RAMMiB: 32768, ExtraSpecs: map[string]string{"resources:VGPU": "one"}}}
			in.NodeGroups = append(in.NodeGroups, NodeGroup{Name: "gpu", Role: "worker", FlavorID: "g1", NodeCount: 1})
		}, []check{annotates("gpu", nil)}},
		{"autoscaling labels apply to the default group", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true", "min_node_count": "2", "max_node_count": "6"}
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "autoscale": true, "machineCountMin": 2, "machineCountMax": 6}})}},
		{"autoscaling max below min", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true"}
			worker(in).MinNodeCount, worker(in).MaxNodeCount = intp(3), intp(2)
		}, []check{failsOn("nodegroups[default-worker].max_node_count")}},
		{"autoscaling with equal bounds is a fixed size", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"auto_scaling_enabled": "true"}
			worker(in).MinNodeCount, worker(in).MaxNodeCount = intp(2), intp(2)
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2}})}},
		{"keystone auth uses the cluster's project and the configured url", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"keystone_auth_enabled": "true"}
			cfg.KeystoneAuthURL = "https://keystone.example.com:5000/v3"
		}, []check{valueAt("authWebhook", "k8s-keystone-auth"), valueAt("addons.openstack.k8sKeystoneAuth.values", map[string]any{"openstackAuthUrl": "https://keystone.example.com:5000/v3", "projectId": "9e4a5c1f2b3d4e5f6a7b8c9d0e1f2a3b"})}},
		{"keystone auth without a configured url", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"keystone_auth_enabled": "true"}
		}, []check{func(t *testing.T, res Result, err error) {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != "values.keystoneAuthURL" {
				t.Errorf("want a ConfigError on values.keystoneAuthURL, got %v", err)
			}
		}}},
		{"oidc needs a client id", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"oidc_issuer_url": "https://sso.example.com"}
		}, []check{failsOn("labels.oidc_client_id")}},
		{"ovn provider forces SOURCE_IP_PORT", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"octavia_provider": "ovn"}
		}, []check{valueAt("addons.openstack.cloudConfig.LoadBalancer.lb-method", "SOURCE_IP_PORT")}},
		{"ovn provider with another algorithm", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"octavia_provider": "ovn", "octavia_lb_algorithm": "ROUND_ROBIN"}
		}, []check{failsOn("labels.octavia_lb_algorithm")}},
		{"pod and service networks must not overlap", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"calico_ipv4pool": "10.0.0.0/8", "service_cluster_ip_range": "10.254.0.0/16"}
		}, []check{failsOn("labels.service_cluster_ip_range")}},
		{"node network must not overlap pods", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"fixed_subnet_cidr": "172.16.0.0/24"}
		}, []check{failsOn("labels.fixed_subnet_cidr")}},
		{"cilium pool with calico warns", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"cilium_ipv4pool": "10.200.0.0/16"}
		}, []check{warns("cilium_ipv4pool is ignored"), absent("kubeNetwork")}},
		{"unresolved external network name", func(in *Input, cfg *Config) { in.ExternalNetworkID = "" },
			[]check{failsOn("cluster_template.external_network_id")}},
		{"fixed network uuid passes through", func(in *Input, cfg *Config) { in.Cluster.FixedNetwork = "1b3e5a7c-9d2f-4e6a-8b0c-1d3e5f7a9b2c" },
			[]check{valueAt("clusterNetworking.internalNetwork.networkFilter", map[string]any{"id": "1b3e5a7c-9d2f-4e6a-8b0c-1d3e5f7a9b2c"})}},
		{"fixed network name must be resolved", func(in *Input, cfg *Config) { in.Cluster.FixedNetwork = "private" },
			[]check{failsOn("cluster.fixed_network")}},
		{"boot volume type must exist", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"boot_volume_size": "20", "boot_volume_type": "gold"}
		}, []check{failsOn("labels.boot_volume_type")}},
		{"boot volume type without size warns", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"boot_volume_type": "__DEFAULT__"}
		}, []check{warns("no effect without boot_volume_size"), absent("controlPlane.machineRootVolume")}},
		{"floating_ip_enabled false is not the api floating ip", func(in *Input, cfg *Config) { in.Cluster.FloatingIPEnabled = boolp(false) },
			[]check{warns("master_lb_floating_ip_enabled=false"), valueAt("apiServer.associateFloatingIP", true)}},
		{"strict labels", func(in *Input, cfg *Config) {
			cfg.StrictLabels = true
			in.Cluster.Labels = map[string]string{"boot_volume_sise": "10", "kube_tag": "v1.30.4"}
		}, []check{failsOn("labels.boot_volume_sise"), warns("kube_tag has no effect")}},
		{"unknown labels warn", func(in *Input, cfg *Config) { in.Cluster.Labels = map[string]string{"boot_volume_sise": "10"} },
			[]check{warns("boot_volume_sise is not known")}},
		{"deprecated alias", func(in *Input, cfg *Config) { in.Cluster.Labels = map[string]string{"etcd_volume_size": "10"} },
			[]check{valueAt("etcd.blockDevice", map[string]any{"size": 10, "type": "Volume"}), warns("etcd_volume_size is deprecated")}},
		{"canonical name wins over alias", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"etcd_volume_size": "10", "etcd_blockdevice_size": "20"}
		}, []check{valueAt("etcd.blockDevice.size", 20), warns("etcd_volume_size is ignored")}},
		{"chart version from the template only", func(in *Input, cfg *Config) {
			in.ClusterTemplate.Labels = map[string]string{"capi_helm_chart_version": "0.27.1"}
			in.Cluster.Labels = map[string]string{"capi_helm_chart_version": "0.26.0"}
		}, []check{func(t *testing.T, res Result, err error) {
			if err != nil || res.ChartVersion != "0.27.1" {
				t.Errorf("chart version %q, %v; want 0.27.1", res.ChartVersion, err)
			}
		}, warns("is read from the cluster template only")}},
		{"other chart versions warn", func(in *Input, cfg *Config) {
			in.ClusterTemplate.Labels = map[string]string{"capi_helm_chart_version": "0.28.0"}
		}, []check{warns("chart version 0.28.0")}},
		{"kubelet refuses node-role labels", func(in *Input, cfg *Config) {
			worker(in).NodeLabels = map[string]string{"node-role.kubernetes.io/worker": ""}
		}, []check{failsOn("nodegroups[default-worker].node_labels")}},
		{"node labels in node.kubernetes.io are fine", func(in *Input, cfg *Config) {
			worker(in).NodeLabels = map[string]string{"node.kubernetes.io/pool": "gpu"}
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "nodeLabels": map[string]any{"node.kubernetes.io/pool": "gpu"}}})}},
		{"control plane taints keep kubeadm's", func(in *Input, cfg *Config) {
			in.NodeGroups[0].NodeTaints = []Taint{{Key: "dedicated", Value: "cp", Effect: "NoExecute"}}
		}, []check{valueAt("controlPlane.kubeadmConfigSpec.initConfiguration.nodeRegistration.taints", []any{
			map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
			map[string]any{"key": "dedicated", "value": "cp", "effect": "NoExecute"},
		})}},
		{"bad taint effect", func(in *Input, cfg *Config) {
			worker(in).NodeTaints = []Taint{{Key: "gpu", Effect: "NoWay"}}
		}, []check{failsOn("nodegroups[default-worker].node_taints[0].effect")}},
		{"node group label overrides the zone", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"availability_zone": "az-1"}
			worker(in).Labels = map[string]string{"availability_zone": "az-2"}
		}, []check{valueAt("nodeGroupDefaults.failureDomain", "az-1"), valueAt("controlPlane.failureDomains", []any{"az-1"}),
			valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "failureDomain": "az-2"}})}},
		{"copied cluster label on a node group is no override", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"availability_zone": "az-1"}
			worker(in).Labels = map[string]string{"availability_zone": "az-1"}
		}, []check{valueAt("nodeGroups", []any{map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2}})}},
		{"node group boots from its flavor disk while others use volumes", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"boot_volume_size": "40"}
			in.NodeGroups = append(in.NodeGroups, in.NodeGroups[1])
			in.NodeGroups[2].Name = "local-disk"
			in.NodeGroups[2].IsDefault = false
			in.NodeGroups[2].Labels = map[string]string{"boot_volume_size": "0"}
		}, []check{absent("nodeGroupDefaults.machineRootVolume"), valueAt("nodeGroups", []any{
			map[string]any{"name": "default-worker", "machineFlavor": "m1.medium", "machineCount": 2, "machineRootVolume": map[string]any{"diskSize": 40}},
			map[string]any{"name": "local-disk", "machineFlavor": "m1.medium", "machineCount": 2},
		})}},
		{"invalid node group label", func(in *Input, cfg *Config) { worker(in).Labels = map[string]string{"boot_volume_size": "lots"} },
			[]check{failsOn("nodegroups[default-worker].labels.boot_volume_size")}},
		{"template delimiters in a label", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"csi_cinder_availability_zone": "{{ .Release.Name }}"}
		}, []check{failsOn("labels.csi_cinder_availability_zone")}},
		{"jinja statement in a label", func(in *Input, cfg *Config) {
			in.Cluster.Labels = map[string]string{"oidc_client_id": "{% for x in y %}"}
		}, []check{failsOn("labels.oidc_client_id")}},
		{"volume type with an unsafe name is skipped", func(in *Input, cfg *Config) {
			in.VolumeTypes = append(in.VolumeTypes, VolumeType{ID: "c1d2e3f4-0000-4000-8000-000000000009", Name: "{{ evil }}"})
		}, []check{warns("gets no StorageClass"), valueAt("addons.openstack.csiCinder.additionalStorageClasses", []any{})}},
		{"configured default volume type must exist", func(in *Input, cfg *Config) { cfg.CSICinderDefaultVolumeType = "gold" },
			[]check{func(t *testing.T, res Result, err error) {
				var ce *ConfigError
				if !errors.As(err, &ce) {
					t.Errorf("want a ConfigError, got %v", err)
				}
			}}},
		{"cinder csi off", func(in *Input, cfg *Config) { in.Cluster.Labels = map[string]string{"cinder_csi_enabled": "false"} },
			[]check{valueAt("addons.openstack.csiCinder", map[string]any{"enabled": false})}},
		{"keep chart mirrors", func(in *Input, cfg *Config) { cfg.KeepChartRegistryMirrors = true },
			[]check{absent("registryMirrors")}},
		{"configured mirrors null the chart's others", func(in *Input, cfg *Config) {
			cfg.RegistryMirrors = map[string][]string{"docker.io": {"https://mirror.example.com/v2/dockerhub"}}
		}, []check{valueAt("registryMirrors", map[string]any{"docker.io": []any{"https://mirror.example.com/v2/dockerhub"}, "ghcr.io": nil, "nvcr.io": nil, "quay.io": nil, "registry.k8s.io": nil})}},
		{"proxy passwords are redacted in errors", func(in *Input, cfg *Config) { in.ClusterTemplate.HTTPProxy = "http://user:secret@proxy example:3128" },
			[]check{func(t *testing.T, res Result, err error) {
				if err == nil || strings.Contains(err.Error(), "secret") {
					t.Errorf("error %v leaks the proxy password or is missing", err)
				}
			}}},
		{"api server port", func(in *Input, cfg *Config) { in.ClusterTemplate.APIServerPort = intp(443) },
			[]check{valueAt("apiServer.port", 443)}},
		{"api server port out of range", func(in *Input, cfg *Config) { in.ClusterTemplate.APIServerPort = intp(70000) },
			[]check{failsOn("cluster_template.apiserver_port")}},
		{"dns nameservers must be addresses", func(in *Input, cfg *Config) { in.ClusterTemplate.DNSNameserver = "8.8.8.8,dns.google" },
			[]check{failsOn("cluster_template.dns_nameserver")}},
		{"keypair from the template", func(in *Input, cfg *Config) { in.Cluster.Keypair = ""; in.ClusterTemplate.KeypairID = "ops" },
			[]check{valueAt("machineSSHKeyName", "ops")}},
		{"keypair that yaml reads as a boolean", func(in *Input, cfg *Config) { in.Cluster.Keypair = "yes" },
			[]check{failsOn("cluster.keypair")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, cfg := minimalInput(t), DefaultConfig()
			tt.modify(&in, &cfg)
			res, err := Build(in, cfg)
			for _, c := range tt.checks {
				c(t, res, err)
			}
		})
	}
}
