package harness

import (
	"context"
	"path/filepath"

	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// The OpenStack world every test starts from: a project with a member user,
// the sidecar's service identity, Kubernetes images one minor version
// apart, flavors, an external network and volume types.
func (h *Harness) populate(ctx context.Context, opts Options) error {
	k := h.Keystone
	if err := k.RegisterEndpoints(ctx, h.OpenStack.Endpoints()); err != nil {
		return err
	}
	h.OpenStack.UseKeystone(k.AuthURL)

	project, user, err := account(ctx, k, "demo", "demo", "member")
	if err != nil {
		return err
	}
	// The sidecar deletes clusters' application credentials (which belong
	// to the users who created them) with its own identity: Keystone's
	// default policy lets only an admin do that.
	_, magnum, err := account(ctx, k, "service", "magnum", "admin")
	if err != nil {
		return err
	}
	cloudsFile := filepath.Join(h.Info.Dir, "service-clouds.yaml")
	if err := k.WriteCloudsYAML(cloudsFile, ServiceCloud, magnum); err != nil {
		return err
	}

	var trustee *keystone.DomainAdmin
	if opts.TrusteeDomain {
		admin, err := k.CreateDomainAdmin(ctx, "magnum", "magnum_domain_admin")
		if err != nil {
			return err
		}
		trustee = &admin
	}

	images := map[string]string{}
	for _, v := range KubeVersions {
		img := h.OpenStack.AddImage(openstackfake.Image{
			Name:       "ubuntu-jammy-kube-" + v,
			Properties: map[string]string{"os_distro": "ubuntu", "kube_version": v},
		})
		images[v] = img.ID
	}
	plain := h.OpenStack.AddImage(openstackfake.Image{Name: "ubuntu-jammy", Properties: map[string]string{"os_distro": "ubuntu"}})
	for _, f := range []openstackfake.Flavor{
		{Name: "m1.small", RAM: 2048, VCPUs: 2, Disk: 20},
		{Name: "m1.medium", RAM: 4096, VCPUs: 2, Disk: 40},
		{Name: "m1.large", RAM: 8192, VCPUs: 4, Disk: 80},
	} {
		h.OpenStack.AddFlavor(f)
	}
	public := h.OpenStack.AddNetwork(openstackfake.Network{Name: "public", External: true, Shared: true})
	h.OpenStack.AddVolumeType(openstackfake.VolumeType{Name: "standard", Description: "Ceph RBD"})
	h.OpenStack.AddVolumeType(openstackfake.VolumeType{Name: "fast-ssd", Description: "NVMe"})

	h.Info = Info{
		Dir:                 h.Info.Dir,
		Kubeconfig:          h.Env.KubeconfigPath,
		SecondKubeconfig:    h.secondKubeconfig(),
		ChartRepository:     h.Charts.URL(),
		ChartName:           ChartName,
		ChartVersion:        ChartVersion,
		NextChartVersion:    NextChartVersion,
		AuthURL:             k.AuthURL,
		Project:             project,
		User:                user,
		ServiceCloudsFile:   cloudsFile,
		ServiceCloud:        ServiceCloud,
		OpenStackURL:        h.OpenStack.URL,
		Images:              images,
		ImageWithoutVersion: plain.ID,
		ExternalNetworkID:   public.ID,
		SimulatorRules:      "capisim-system/capisim",
		TrusteeDomain:       trustee,
	}
	return nil
}

// account makes a project and a user holding role in it.
func account(ctx context.Context, k *keystone.Keystone, project, user, role string) (keystone.Project, keystone.User, error) {
	p, err := k.CreateProject(ctx, project)
	if err != nil {
		return keystone.Project{}, keystone.User{}, err
	}
	u, err := k.CreateUser(ctx, user, p, role)
	return p, u, err
}

// ServiceCloud names the sidecar's identity in its clouds.yaml.
const ServiceCloud = "magnum"

// KubeVersions are the Kubernetes versions images exist for, one minor
// version apart so upgrades (and refused skips) can be exercised.
var KubeVersions = []string{"v1.32.5", "v1.33.2", "v1.34.1", "v1.35.0"}

// Info is what a client of the stack needs; test/cmd/testbed writes it as
// JSON for the Python tests and the demo.
type Info struct {
	Dir                 string            `json:"dir"`
	Kubeconfig          string            `json:"kubeconfig"`
	SecondKubeconfig    string            `json:"second_kubeconfig,omitempty"`
	ChartRepository     string            `json:"chart_repository"`
	ChartName           string            `json:"chart_name"`
	ChartVersion        string            `json:"chart_version"`
	NextChartVersion    string            `json:"next_chart_version"`
	AuthURL             string            `json:"auth_url"`
	Project             keystone.Project  `json:"project"`
	User                keystone.User     `json:"user"`
	ServiceCloudsFile   string            `json:"service_clouds_file"`
	ServiceCloud        string            `json:"service_cloud"`
	OpenStackURL        string            `json:"openstack_url"`
	Images              map[string]string `json:"images"`
	ImageWithoutVersion string            `json:"image_without_kube_version"`
	ExternalNetworkID   string            `json:"external_network_id"`
	SimulatorRules      string            `json:"simulator_rules_configmap"`
	// TrusteeDomain is Magnum's trustee domain and its admin, when
	// Options.TrusteeDomain asked for them.
	TrusteeDomain *keystone.DomainAdmin `json:"trustee_domain,omitempty"`
}

func (h *Harness) secondKubeconfig() string {
	if h.SecondEnv == nil {
		return ""
	}
	return h.SecondEnv.KubeconfigPath
}
