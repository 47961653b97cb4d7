package helmvalues

import (
	"reflect"
	"strings"
	"testing"
)

// TestAPIServerLabelsTogether: what each label does beside the others,
// beyond the one-label examples of TestLabelGolden.
func TestAPIServerLabelsTogether(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		fixedSubnet string
		wantErr     string // substring of the error; "" for success
		wantValues  map[string]any
		wantPatches []SpecPatch
		// wantExpirySet: a label set control_plane_certificates_expiry_days.
		wantExpirySet bool
		wantEndpoint  APIEndpoint
	}{
		{
			name:    "floating IP without a floating IP",
			labels:  map[string]string{"api_server_floating_ip": "203.0.113.10", "master_lb_floating_ip_enabled": "false"},
			wantErr: `labels.api_server_floating_ip: invalid value "203.0.113.10": expected no floating IP while master_lb_floating_ip_enabled is false`,
		},
		{
			name:    "fixed IP outside the cluster network",
			labels:  map[string]string{"api_server_fixed_ip": "10.1.0.5", "fixed_subnet_cidr": "10.0.0.0/24"},
			wantErr: `labels.api_server_fixed_ip: invalid value "10.1.0.5": expected a host address inside the cluster network 10.0.0.0/24`,
		},
		{
			name:    "fixed IP is the network's broadcast address",
			labels:  map[string]string{"api_server_fixed_ip": "10.0.3.255", "fixed_subnet_cidr": "10.0.0.0/22"},
			wantErr: `expected a host address inside the cluster network 10.0.0.0/22`,
		},
		{
			name:         "fixed IP on a subnet of the user's is not checked here",
			labels:       map[string]string{"api_server_fixed_ip": "192.168.7.20"},
			fixedSubnet:  "5b8e1f5c-0000-4000-8000-00000000aaaa",
			wantValues:   map[string]any{"apiServer.fixedIP": "192.168.7.20"},
			wantEndpoint: APIEndpoint{FixedIP: "192.168.7.20"},
		},
		{
			name: "load balancer flavor and zone are one patch; renewal another",
			labels: map[string]string{"api_server_lb_flavor": "amphora-ha", "api_server_lb_availability_zone": "az-2",
				"control_plane_certificates_expiry_days": "30", "api_server_floating_ip": "203.0.113.10"},
			wantValues:    map[string]any{"apiServer.floatingIP": "203.0.113.10"},
			wantExpirySet: true,
			wantEndpoint:  APIEndpoint{FloatingIP: "203.0.113.10", LBFlavor: "amphora-ha", LBAvailabilityZone: "az-2"},
			wantPatches: []SpecPatch{
				{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster",
					Spec: map[string]any{"apiServerLoadBalancer": map[string]any{"flavor": "amphora-ha", "availabilityZone": "az-2"}}},
				{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmControlPlane",
					Spec: map[string]any{"rolloutBefore": map[string]any{"certificatesExpiryDays": 30}}},
				{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane",
					Spec: map[string]any{"rollout": map[string]any{"before": map[string]any{"certificatesExpiryDays": 30}}}},
			},
		},
		{
			name:          "renewal off",
			labels:        map[string]string{"control_plane_certificates_expiry_days": "0"},
			wantExpirySet: true,
		},
		{
			name:   "renewal unset: the cluster's default applies, outside Build",
			labels: map[string]string{},
		},
		{
			name: "cipher suites beside the chart's kubelet flags and the audit log's API server flags",
			labels: map[string]string{"api_server_tls_cipher_suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
				"kubelet_tls_cipher_suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "audit_log_enabled": "true"},
			wantValues: map[string]any{
				"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.tls-cipher-suites":                 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
				"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.audit-log-maxage":                  "30",
				"controlPlane.kubeadmConfigSpec.initConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites":      "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
				"nodeGroupDefaults.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs.tls-cipher-suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			in.Cluster.Labels = tt.labels
			if tt.fixedSubnet != "" {
				in.FixedSubnetID = tt.fixedSubnet
			}
			res, err := Build(in, DefaultConfig())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.wantValues {
				if got, _ := lookup(res.Values, strings.Split(path, ".")...); got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
			// Build renders renewal only when a label asks for it:
			// nothing else patches the KubeadmControlPlane.
			if !reflect.DeepEqual(res.SpecPatches, tt.wantPatches) {
				t.Errorf("spec patches %v, want %v", res.SpecPatches, tt.wantPatches)
			}
			if res.CertificatesExpiryDaysSet != tt.wantExpirySet {
				t.Errorf("CertificatesExpiryDaysSet = %v, want %v", res.CertificatesExpiryDaysSet, tt.wantExpirySet)
			}
			if res.APIEndpoint != tt.wantEndpoint {
				t.Errorf("APIEndpoint = %+v, want %+v", res.APIEndpoint, tt.wantEndpoint)
			}
		})
	}
}

func TestKeepEtcdEncryption(t *testing.T) {
	on := func() map[string]any {
		return map[string]any{"etcd": map[string]any{"encryption": map[string]any{"enabled": true}}}
	}
	tests := []struct {
		name             string
		deployed, values map[string]any
		wantKept, wantOn bool
	}{
		{"deployed on, now off: kept on", on(), map[string]any{"etcd": map[string]any{"dataDir": "/var/lib/etcd"}}, true, true},
		{"deployed on, still on", on(), on(), false, true},
		{"deployed off, now on", map[string]any{}, on(), false, true},
		{"never on", nil, map[string]any{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if kept := KeepEtcdEncryption(tt.deployed, tt.values); kept != tt.wantKept {
				t.Errorf("kept = %v, want %v", kept, tt.wantKept)
			}
			if got := EtcdEncryptionEnabled(tt.values); got != tt.wantOn {
				t.Errorf("on = %v, want %v", got, tt.wantOn)
			}
		})
	}
}

func TestHostInNetwork(t *testing.T) {
	tests := []struct {
		addr, cidr string
		ok         bool
	}{
		{"10.0.0.250", "10.0.0.0/24", true},
		{"10.0.0.0", "10.0.0.0/24", false},
		{"10.0.0.255", "10.0.0.0/24", false},
		{"10.0.1.0", "10.0.0.0/23", true},
		{"10.0.1.255", "10.0.0.0/23", false},
		{"10.0.2.1", "10.0.0.0/23", false},
		{"2001:db8::ffff", "2001:db8::/64", true},
		{"10.0.0.5", "", true}, // the network is not known here
	}
	for _, tt := range tests {
		if got := hostInNetwork(tt.addr, tt.cidr) == ""; got != tt.ok {
			t.Errorf("hostInNetwork(%s, %s) ok = %v, want %v", tt.addr, tt.cidr, got, tt.ok)
		}
	}
}
