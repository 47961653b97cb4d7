package helmvalues

import (
	"fmt"
	"strings"
)

// maxKubeletSkew is how many minor versions a node's kubelet may be older
// than the control plane (Kubernetes' version skew policy since 1.28).
const maxKubeletSkew = 3

// nodeGroupImage gives a worker node group its own image and Kubernetes
// version when its image_id is not the template's: Magnum records a group
// upgraded on its own (or created with --image) in NodeGroup.image_id. The
// chart merges kubernetesVersion and machineImageId of a node group over the
// cluster's, so every render carries them and a later Helm upgrade does not
// roll the group back to the cluster's. A group's kubelet must not be newer
// than the control plane's minor version, nor more than three minors older.
func (b *builder) nodeGroupImage(ng NodeGroup, values map[string]any) {
	if ng.ImageID == "" || ng.ImageID == b.in.ClusterTemplate.ImageID {
		return
	}
	field := nodeGroupField(ng, "image_id")
	img, ok := b.in.NodeGroupImages[ng.ImageID]
	if !ok {
		b.p.field(field, ng.ImageID, "an image the driver resolved (nodegroup_images): the node group's own Glance image")
		return
	}
	if problem := checkID(img.ID); problem != "" {
		b.p.field(field, img.ID, problem)
		return
	}
	version := strings.TrimPrefix(strings.TrimSpace(img.KubeVersion), "v")
	v, ok := parseSemver(version)
	if !ok {
		b.p.field(field, ng.ImageID, "an image whose kube_version property is a Kubernetes version such as 1.30.4")
		return
	}
	if distro := strings.ToLower(strings.TrimSpace(img.OSDistro)); distro != b.osDistro {
		b.p.field(field, ng.ImageID, fmt.Sprintf("an image of the cluster's os_distro %q (the chart's bootstrap format is the cluster's), not %q", b.osDistro, distro))
		return
	}
	cluster, _ := b.values["kubernetesVersion"].(string)
	if cv, ok := parseSemver(cluster); ok {
		if problem := kubeletSkew(v, cv); problem != "" {
			b.p.field(field, ng.ImageID, fmt.Sprintf("an image of Kubernetes %s: %s", version, problem))
			return
		}
	}
	if img.ID != b.in.Image.ID {
		values["machineImageId"] = img.ID
	}
	if version != cluster {
		values["kubernetesVersion"] = version
	}
}

// kubeletSkew says why nodes of version node cannot join a control plane of
// version cp, or "" when they can.
func kubeletSkew(node, cp semver) string {
	switch {
	case node.major != cp.major || node.minor > cp.minor:
		return fmt.Sprintf("a node group must not be newer than the control plane's v%d.%d (upgrade the cluster first)", cp.major, cp.minor)
	case cp.minor-node.minor > maxKubeletSkew:
		return fmt.Sprintf("a node group may be at most %d minor versions older than the control plane's v%d.%d", maxKubeletSkew, cp.major, cp.minor)
	}
	return ""
}
