package helmvalues

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// etcd maps the dedicated etcd block device.
func (b *builder) etcd() {
	size, _ := b.labels.integer("etcd_blockdevice_size")
	volumeType, zone := b.labels.str("etcd_blockdevice_volume_type"), b.labels.str("etcd_blockdevice_volume_az")
	if size <= 0 {
		if volumeType != "" || zone != "" {
			b.warn("etcd_blockdevice_volume_type and etcd_blockdevice_volume_az have no effect without etcd_blockdevice_size")
		}
		return
	}
	device := map[string]any{"size": size}
	if b.labels.str("etcd_blockdevice_type") == "local" {
		device["type"] = "Local"
		if volumeType != "" || zone != "" {
			b.warn("etcd_blockdevice_volume_type and etcd_blockdevice_volume_az have no effect with etcd_blockdevice_type local")
		}
	} else {
		device["type"] = "Volume"
		if volumeType != "" && b.checkVolumeType(volumeType, "labels.etcd_blockdevice_volume_type") {
			device["volumeType"] = volumeType
		}
		if zone != "" {
			device["availabilityZone"] = zone
		}
	}
	put(b.values, device, "etcd", "blockDevice")
}

// storageClasses maps Cinder CSI: one StorageClass per Cinder volume type the
// project can use, the configured (else the first listed) one being the
// cluster default, as the StackHPC driver does.
func (b *builder) storageClasses() {
	enabled := b.labels.boolean("cinder_csi_enabled")
	put(b.values, enabled, "addons", "openstack", "csiCinder", "enabled")
	if !enabled {
		return
	}
	base := func() map[string]any {
		return map[string]any{
			"reclaimPolicy":        b.labels.str("csi_cinder_reclaim_policy"),
			"volumeBindingMode":    b.labels.str("csi_cinder_volume_binding_mode"),
			"allowVolumeExpansion": b.labels.boolean("csi_cinder_allow_volume_expansion"),
			"availabilityZone":     b.labels.str("csi_cinder_availability_zone"),
			"fstype":               b.labels.str("csi_cinder_fstype"),
		}
	}
	defer b.cinderTopologies()

	var usable []VolumeType
	for _, vt := range b.in.VolumeTypes {
		if msg := checkChartScalar(vt.Name); msg != "" {
			b.warn("Cinder volume type %q gets no StorageClass: the chart writes its name unquoted, so it must be %s", vt.Name, msg)
			continue
		}
		usable = append(usable, vt)
	}
	if len(usable) == 0 {
		if name := b.cfg.CSICinderDefaultVolumeType; name != "" {
			b.p.config("values.csiCinderDefaultVolumeType", name, "is not one of the project's Cinder volume types (none were listed)")
			return
		}
		b.warn("no Cinder volume types were listed: the default StorageClass csi-cinder uses Cinder's default volume type")
		put(b.values, base(), "addons", "openstack", "csiCinder", "defaultStorageClass")
		return
	}

	defaultIndex := 0
	if name := b.cfg.CSICinderDefaultVolumeType; name != "" {
		defaultIndex = -1
		for i, vt := range usable {
			if vt.Name == name || vt.ID == name {
				defaultIndex = i
				break
			}
		}
		if defaultIndex < 0 {
			b.p.config("values.csiCinderDefaultVolumeType", name, "is not one of the project's Cinder volume types")
			return
		}
	}

	names := map[string]string{} // StorageClass name → volume type
	var additional []map[string]any
	for i, vt := range usable {
		name := storageClassName(vt.Name)
		if other, taken := names[name]; taken {
			sum := sha256.Sum256([]byte(vt.Name))
			deduped := fmt.Sprintf("%s-%s", name, hex.EncodeToString(sum[:])[:nodeGroupHashLen])
			b.warn("Cinder volume types %q and %q both give StorageClass name %s; %q gets %s", other, vt.Name, name, vt.Name, deduped)
			name = deduped
		}
		names[name] = vt.Name
		sc := base()
		sc["name"] = name
		sc["volumeType"] = vt.Name
		if i == defaultIndex {
			sc["enabled"] = true
			put(b.values, sc, "addons", "openstack", "csiCinder", "defaultStorageClass")
			continue
		}
		additional = append(additional, sc)
	}
	sort.Slice(additional, func(i, j int) bool { return additional[i]["name"].(string) < additional[j]["name"].(string) })
	list := make([]any, len(additional))
	for i, sc := range additional {
		list[i] = sc
	}
	put(b.values, list, "addons", "openstack", "csiCinder", "additionalStorageClasses")
}

// storageClassName is StackHPC's sanitized volume type name; a name with no
// letters or digits gets a stable name of its own.
func storageClassName(volumeType string) string {
	name := sanitizedName(volumeType)
	if len(name) > 200 {
		name = name[:200]
	}
	if name == "" {
		sum := sha256.Sum256([]byte(volumeType))
		name = "volume-type-" + hex.EncodeToString(sum[:])[:nodeGroupHashLen]
	}
	return name
}
