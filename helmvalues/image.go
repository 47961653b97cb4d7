package helmvalues

import (
	"regexp"
	"strings"
)

var osDistroPattern = regexp.MustCompile(`^[a-z][a-z0-9._-]*$`)

// machineImage maps the resolved Glance image: its id, its kube_version
// property (the Kubernetes version: Magnum's kube_tag label is not used) and
// its os_distro property (flatcar switches the chart to Ignition).
func (b *builder) machineImage() {
	img := b.in.Image
	switch {
	case img.ID == "":
		b.p.field("image.id", img.ID, "the Glance id of the template's image (cluster_template.image_id), resolved by the driver")
	case checkID(img.ID) != "":
		b.p.field("image.id", img.ID, checkID(img.ID))
	default:
		put(b.values, img.ID, "machineImageId")
	}

	version := strings.TrimPrefix(strings.TrimSpace(img.KubeVersion), "v")
	if _, ok := parseSemver(version); !ok {
		b.p.field("image.kube_version", img.KubeVersion, "the image property kube_version: a Kubernetes version such as 1.30.4 (a leading v is allowed)")
	} else {
		put(b.values, version, "kubernetesVersion")
	}

	distro := strings.ToLower(strings.TrimSpace(img.OSDistro))
	if len(distro) > 64 || !osDistroPattern.MatchString(distro) {
		b.p.field("image.os_distro", img.OSDistro, "the image property os_distro, e.g. ubuntu or flatcar")
		return
	}
	b.osDistro = distro
	put(b.values, distro, "osDistro")
}
