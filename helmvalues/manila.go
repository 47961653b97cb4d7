package helmvalues

// Manila shares are mounted by the node plugin of their protocol, to which
// the Manila CSI node plugin forwards: CephFS shares by ceph-csi-cephfs,
// which the chart installs (addons.csi.cephfs), NFS shares by
// csi-driver-nfs, which it does not, so the driver adds it as a custom addon
// of the chart (addons.custom).
const (
	manilaProtocolCephFS = "cephfs"
	manilaProtocolNFS    = "nfs"

	// csiNFSAddon names the custom addon: its HelmRelease is
	// <release>-csi-nfs, its Helm release in the workload cluster csi-nfs.
	csiNFSAddon     = "csi-nfs"
	csiNFSNamespace = "csi-nfs-system"
	// csiNFSPluginDir is where csi-driver-nfs's node plugin serves its
	// socket (its chart's kubeletDir /var/lib/kubelet + plugins/csi-nfsplugin).
	csiNFSPluginDir = "/var/lib/kubelet/plugins/csi-nfsplugin"
	// manilaNFSProvisioner is the Manila CSI driver's name for NFS shares
	// (<protocol>.<driverName>), the StorageClass's provisioner.
	manilaNFSProvisioner = "nfs.manila.csi.openstack.org"
	csiNFSChartVersion   = "4.13.4"
)

// csiNFSChart is the csi-driver-nfs chart installed for NFS shares, pinned
// like the chart's own addons.
func csiNFSChart() map[string]any {
	return map[string]any{
		"repo":    "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
		"name":    "csi-driver-nfs",
		"version": csiNFSChartVersion,
	}
}

// manila maps manila_csi_enabled and the labels that tune it: the share
// protocol, share type and share network of the csi-manila StorageClass.
func (b *builder) manila() {
	if !b.labels.boolean("manila_csi_enabled") {
		for _, name := range []string{"manila_csi_share_protocol", "manila_csi_share_type", "manila_csi_share_network_id"} {
			if b.labels.given[name] {
				b.warn("label %s has no effect without manila_csi_enabled", name)
			}
		}
		return
	}
	put(b.values, true, "addons", "openstack", "csiManila", "enabled")
	storageClass := []string{"addons", "openstack", "csiManila", "defaultStorageClass"}
	shareType := b.labels.str("manila_csi_share_type")
	if id := b.labels.str("manila_csi_share_network_id"); id != "" {
		put(b.values, id, append(storageClass, "parameters", "shareNetworkID")...)
	}
	if b.manilaProtocol() == manilaProtocolNFS {
		if shareType == "" {
			b.p.field("labels.manila_csi_share_type", "", "the Manila share type of NFS shares (manila_csi_share_protocol "+
				"is nfs, given or implied by manila_csi_share_network_id); Manila CSI needs one for NFS")
			return
		}
		b.manilaNFS()
	} else {
		put(b.values, true, "addons", "csi", "cephfs", "enabled")
	}
	if shareType != "" {
		put(b.values, shareType, append(storageClass, "parameters", "type")...)
	}
}

// manilaProtocol is the share protocol: the label's, else NFS when a share
// network is given (share networks serve share types that create share
// servers, which CephFS back ends do not; VEXXHOST's driver reads the label
// the same way), else CephFS.
func (b *builder) manilaProtocol() string {
	if protocol := b.labels.str("manila_csi_share_protocol"); protocol != "" {
		return protocol
	}
	if b.labels.str("manila_csi_share_network_id") != "" {
		return manilaProtocolNFS
	}
	return manilaProtocolCephFS
}

// manilaNFS configures Manila CSI for NFS alone (its node plugin forwards
// to csi-driver-nfs's socket) and installs csi-driver-nfs. The chart turns
// CephFS on only with addons.csi.cephfs, so it stays off. csi-driver-nfs's
// own controller is not used (Manila CSI's provisions the shares), so it is
// kept on the control plane, off the workers.
func (b *builder) manilaNFS() {
	protocols := []any{map[string]any{
		"protocolSelector": "NFS",
		"fsGroupPolicy":    "None",
		"fwdNodePluginEndpoint": map[string]any{
			"dir":      csiNFSPluginDir,
			"sockFile": "csi.sock",
		},
	}}
	put(b.values, protocols, "addons", "openstack", "csiManila", "values", "shareProtocols")
	put(b.values, manilaNFSProvisioner, "addons", "openstack", "csiManila", "defaultStorageClass", "provisioner")
	put(b.values, map[string]any{
		"kind": "HelmRelease",
		"spec": map[string]any{
			"namespace": csiNFSNamespace,
			"chart":     csiNFSChart(),
			"values":    map[string]any{"controller": map[string]any{"runOnControlPlane": true}},
		},
	}, "addons", "custom", csiNFSAddon)
}
