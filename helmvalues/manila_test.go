package helmvalues

import (
	"testing"
)

// TestManila: the share protocol (given, or implied by a share network)
// decides the node plugin, the Manila CSI share protocols and the
// StorageClass's provisioner; NFS needs a share type.
func TestManila(t *testing.T) {
	const network = "0b3c1c9e-5f1a-4d2b-8c7e-3a9f6e2d1b40"
	nfsProtocols := []any{map[string]any{"protocolSelector": "NFS", "fsGroupPolicy": "None",
		"fwdNodePluginEndpoint": map[string]any{"dir": "/var/lib/kubelet/plugins/csi-nfsplugin", "sockFile": "csi.sock"}}}
	nfsAddon := map[string]any{"kind": "HelmRelease", "spec": map[string]any{
		"namespace": "csi-nfs-system",
		"chart": map[string]any{"repo": "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
			"name": "csi-driver-nfs", "version": "4.13.4"},
		"values": map[string]any{"controller": map[string]any{"runOnControlPlane": true}},
	}}
	const sc = "addons.openstack.csiManila.defaultStorageClass."
	tests := []struct {
		name     string
		labels   map[string]string
		want     map[string]any // dotted value path → value (nil: unset)
		warning  string
		refusals []string
	}{
		{"off by default", nil, map[string]any{"addons.openstack.csiManila": nil, "addons.csi": nil, "addons.custom": nil}, "", nil},
		{"CephFS by default", map[string]string{"manila_csi_enabled": "true"}, map[string]any{
			"addons.openstack.csiManila.enabled": true, "addons.csi.cephfs.enabled": true,
			"addons.openstack.csiManila.values": nil, sc + "provisioner": nil, sc + "parameters": nil, "addons.custom": nil,
		}, "", nil},
		{"CephFS with a share type", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_type": "cephfsnative1"}, map[string]any{
			"addons.csi.cephfs.enabled": true, sc + "parameters": map[string]any{"type": "cephfsnative1"},
		}, "", nil},
		{"NFS given", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_protocol": "NFS", "manila_csi_share_type": "default"}, map[string]any{
			"addons.openstack.csiManila.enabled": true, "addons.csi": nil,
			"addons.openstack.csiManila.values": map[string]any{"shareProtocols": nfsProtocols},
			sc + "provisioner":                  "nfs.manila.csi.openstack.org", sc + "parameters": map[string]any{"type": "default"},
			"addons.custom": map[string]any{"csi-nfs": nfsAddon},
		}, "", nil},
		{"NFS implied by a share network", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_network_id": network, "manila_csi_share_type": "dhss"}, map[string]any{
			"addons.csi": nil, sc + "provisioner": "nfs.manila.csi.openstack.org",
			sc + "parameters":            map[string]any{"type": "dhss", "shareNetworkID": network},
			"addons.custom.csi-nfs.kind": "HelmRelease",
		}, "", nil},
		{"CephFS given with a share network", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_network_id": network, "manila_csi_share_protocol": "cephfs"}, map[string]any{
			"addons.csi.cephfs.enabled": true, sc + "parameters": map[string]any{"shareNetworkID": network}, "addons.custom": nil,
		}, "", nil},
		{"NFS without a share type is refused", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_protocol": "nfs"}, nil, "",
			[]string{"labels.manila_csi_share_type"}},
		{"a share network without a share type is refused", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_network_id": network}, nil, "",
			[]string{"labels.manila_csi_share_type"}},
		{"an unknown protocol is refused", map[string]string{"manila_csi_enabled": "true", "manila_csi_share_protocol": "cifs"}, nil, "",
			[]string{"labels.manila_csi_share_protocol"}},
		{"protocol without Manila warns", map[string]string{"manila_csi_share_protocol": "nfs"},
			map[string]any{"addons.openstack.csiManila": nil, "addons.custom": nil}, "manila_csi_share_protocol has no effect without manila_csi_enabled", nil},
		{"share network without Manila warns", map[string]string{"manila_csi_share_network_id": network},
			map[string]any{"addons.openstack.csiManila": nil}, "manila_csi_share_network_id has no effect without manila_csi_enabled", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			in.Cluster.Labels = tt.labels
			res, ok := buildChecked(t, in, DefaultConfig(), tt.refusals)
			if !ok {
				return
			}
			assertValuesAndWarning(t, res, tt.want, tt.warning)
		})
	}
}
