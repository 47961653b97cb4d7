package helmvalues

import (
	"strings"
	"testing"
)

// TestNodeAndAddonSwitches: Hubble, the GPU operators, worker security
// group rules and the Cinder allowed topologies (Manila: TestManila).
func TestNodeAndAddonSwitches(t *testing.T) {
	tests := []struct {
		name    string
		labels  map[string]string
		driver  string
		zones   []string
		want    map[string]any // dotted value path → value (nil: unset)
		warning string
	}{
		{"nothing given keeps the chart's defaults", nil, "", nil, map[string]any{
			"addons.nvidiaGPUOperator.enabled": nil, "addons.amdGPUOperator.enabled": nil,
			"addons.cni.cilium.release.values": nil, "clusterNetworking.workerNodesSecurityGroupRules": nil,
		}, ""},
		{"GPU operators switched", map[string]string{"nvidia_gpu_operator_enabled": "false", "amd_gpu_operator_enabled": "yes"}, "", nil,
			map[string]any{"addons.nvidiaGPUOperator.enabled": false, "addons.amdGPUOperator.enabled": true}, ""},
		{"Hubble with Cilium", map[string]string{"cilium_hubble_ui_enabled": "true"}, "cilium", nil, map[string]any{
			"addons.cni.cilium.release.values.hubble": map[string]any{"enabled": true, "relay": map[string]any{"enabled": true}, "ui": map[string]any{"enabled": true}},
		}, ""},
		{"Hubble with Calico warns", map[string]string{"cilium_hubble_ui_enabled": "true"}, "calico", nil,
			map[string]any{"addons.cni.cilium.release.values": nil}, "cilium_hubble_ui_enabled has no effect: the CNI is calico"},
		{"security group rules", map[string]string{"extra_security_group_rules": "tcp:8443:10.0.0.0/8,icmp::2001:db8::/32"}, "", nil,
			map[string]any{"clusterNetworking.workerNodesSecurityGroupRules": []any{
				map[string]any{"name": "extra tcp 8443 from 10.0.0.0/8", "description": "label extra_security_group_rules", "direction": "ingress",
					"etherType": "IPv4", "protocol": "tcp", "portRangeMin": 8443.0, "portRangeMax": 8443.0, "remoteIPPrefix": "10.0.0.0/8"},
				map[string]any{"name": "extra icmp from 2001:db8::/32", "description": "label extra_security_group_rules", "direction": "ingress",
					"etherType": "IPv6", "protocol": "icmp", "remoteIPPrefix": "2001:db8::/32"},
			}}, ""},
		{"allowed topologies", nil, "", []string{"az-1", "az-2"}, map[string]any{
			"addons.openstack.csiCinder.defaultStorageClass.allowedTopologies": []any{map[string]any{"matchLabelExpressions": []any{
				map[string]any{"key": "topology.cinder.csi.openstack.org/zone", "values": []any{"az-1", "az-2"}}}}},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			in.Cluster.Labels = tt.labels
			if tt.driver != "" {
				in.ClusterTemplate.NetworkDriver = tt.driver
			}
			cfg := DefaultConfig()
			cfg.CSICinderAllowedTopologies = tt.zones
			res, _ := buildChecked(t, in, cfg, nil)
			assertValuesAndWarning(t, res, tt.want, tt.warning)
		})
	}
}

func TestSecurityGroupRuleRefusals(t *testing.T) {
	for raw, expected := range map[string]string{
		"tcp:0:0.0.0.0/0":        `rule "tcp:0:0.0.0.0/0" is not a rule with a port or a port range`,
		"tcp:443":                `rule "tcp:443" is not protocol:ports:cidr`,
		"gre::10.0.0.0/8":        "a rule for tcp, udp, sctp or icmp",
		"icmp:8:10.0.0.0/8":      "an icmp rule without ports",
		"tcp:22:10.0.0.1/8":      `rule "tcp:22:10.0.0.1/8" is not a rule whose source is`,
		"tcp:22:0.0.0.0/0,udp:1": `rule "udp:1"`,
	} {
		if _, got := securityGroupRulesType.parse(raw); !strings.Contains(got, expected) {
			t.Errorf("%q: %q, want %q", raw, got, expected)
		}
	}
}
