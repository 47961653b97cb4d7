package helmvalues

import (
	"fmt"
)

// Magnum's docker_volume_size: a Cinder volume per worker node for
// containerd's images and writable layers, as the Heat driver's Docker
// volume was. The chart attaches it (additionalBlockDevices, tagged
// "containerd", so it appears as /dev/disk/openstack/by-tag/containerd);
// kubeadm's cloud-init formats it and mounts it on /var/lib/containerd, and
// containerd restarts on it before kubeadm pulls anything.

const (
	containerdDevice    = "containerd"
	containerdDataDir   = "/var/lib/containerd"
	containerdDiskLabel = "containerd_disk"
	maxDockerVolumeSize = 16384
)

// dockerVolumeSize is a worker node group's docker_volume_size: its own,
// else the cluster's, else the template's; 0 means none.
func (b *builder) dockerVolumeSize(ng NodeGroup) (size int, field string) {
	for _, c := range []struct {
		size  *int
		field string
	}{
		{ng.DockerVolumeSize, nodeGroupField(ng, "docker_volume_size")},
		{b.in.Cluster.DockerVolumeSize, "cluster.docker_volume_size"},
		{b.in.ClusterTemplate.DockerVolumeSize, "cluster_template.docker_volume_size"},
	} {
		if c.size != nil {
			return *c.size, c.field
		}
	}
	return 0, ""
}

// containerdVolume adds a worker node group's containerd volume to its
// values: the block device, and the filesystem and mount in its kubeadm
// config.
func (b *builder) containerdVolume(ng NodeGroup, values map[string]any) {
	size, field := b.dockerVolumeSize(ng)
	volumeType, _ := b.nodeGroupLabelOrCluster(ng, "docker_volume_type").(string)
	switch {
	case size < 0 || size > maxDockerVolumeSize:
		b.p.field(field, fmt.Sprint(size), fmt.Sprintf("a size in GiB between 0 (no volume) and %d", maxDockerVolumeSize))
		return
	case size == 0:
		if volumeType != "" {
			b.warn("node group %q: docker_volume_type has no effect without docker_volume_size", ng.Name)
		}
		return
	}
	device := map[string]any{"size": size, "type": "Volume"}
	if volumeType != "" && b.checkVolumeType(volumeType, nodeGroupField(ng, "labels.docker_volume_type")) {
		device["volumeType"] = volumeType
	}
	put(values, map[string]any{containerdDevice: device}, "additionalBlockDevices")
	put(values, []any{map[string]any{
		"device": "/dev/disk/openstack/by-tag/" + containerdDevice, "filesystem": "ext4", "label": containerdDiskLabel,
	}}, "kubeadmConfigSpec", "diskSetup", "filesystems")
	put(values, []any{[]any{"LABEL=" + containerdDiskLabel, containerdDataDir}}, "kubeadmConfigSpec", "mounts")
	// A node group's list replaces nodeGroupDefaults' (the chart merges
	// them with sprig's merge), and the proxy's commands there already
	// restart containerd.
	if _, proxy := lookup(b.values, "nodeGroupDefaults", "kubeadmConfigSpec", "preKubeadmCommands"); !proxy {
		put(values, []any{"systemctl restart containerd"}, "kubeadmConfigSpec", "preKubeadmCommands")
	}
}

// KeepDeployedContainerdVolumes leaves the deployed worker node groups that
// have no containerd volume without one, so that a cluster made before the
// driver mapped docker_volume_size (or adopted from a driver that ignored
// it) does not roll all its workers at its next update. New node groups get
// theirs. values are the rendered values, changed in place.
func KeepDeployedContainerdVolumes(deployed, values map[string]any) {
	hadVolume := map[string]bool{} // deployed worker node group → has one
	list, _ := deployed["nodeGroups"].([]any)
	for _, item := range list {
		ng, _ := item.(map[string]any)
		if name, _ := ng["name"].(string); name != "" {
			_, has := lookup(ng, "additionalBlockDevices", containerdDevice)
			hadVolume[name] = has
		}
	}
	rendered, _ := values["nodeGroups"].([]any)
	for _, item := range rendered {
		ng, _ := item.(map[string]any)
		name, _ := ng["name"].(string)
		if had, deployedBefore := hadVolume[name]; deployedBefore && !had {
			dropContainerdVolume(ng)
		}
	}
}

// dropContainerdVolume removes what containerdVolume added to a node group.
func dropContainerdVolume(ng map[string]any) {
	if devices, ok := ng["additionalBlockDevices"].(map[string]any); ok {
		delete(devices, containerdDevice)
		if len(devices) == 0 {
			delete(ng, "additionalBlockDevices")
		}
	}
	spec, ok := ng["kubeadmConfigSpec"].(map[string]any)
	if !ok {
		return
	}
	delete(spec, "diskSetup")
	delete(spec, "mounts")
	if commands, _ := spec["preKubeadmCommands"].([]any); len(commands) == 1 && commands[0] == "systemctl restart containerd" {
		delete(spec, "preKubeadmCommands")
	}
	if len(spec) == 0 {
		delete(ng, "kubeadmConfigSpec")
	}
}
