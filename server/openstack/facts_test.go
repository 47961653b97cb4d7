package openstack

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

func TestFacts(t *testing.T) {
	c := newFakeCloud(t, Config{MinFlavorRAMMiB: 2048, MinFlavorVCPUs: 1})
	volumeTypes := []helmvalues.VolumeType{
		{Name: "__DEFAULT__", IsPublic: true, Description: "Default Volume Type", ExtraSpecs: map[string]string{}},
		{Name: "ssd", IsPublic: true, ExtraSpecs: map[string]string{"RESKEY:availability_zones": "nova"}},
	}
	base := func() Objects {
		return Objects{
			Cluster:  helmvalues.Cluster{UUID: "c0ffee00-0000-4000-8000-000000000001", Name: "k8s", ProjectID: testProject},
			Template: helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID},
			NodeGroups: []helmvalues.NodeGroup{
				{Name: "default-master", Role: "master", FlavorID: "m1.medium"},
				{Name: "default-worker", Role: "worker", FlavorID: c.small.ID},
			},
		}
	}
	tests := []struct {
		name   string
		change func(*Objects)
		want   func(*Facts) // fields besides volume types; nil when an error is expected
		class  string
		errHas []string
	}{
		{name: "image by id", want: func(f *Facts) {
			f.Image = helmvalues.Image{ID: c.kubeImage.ID, KubeVersion: "v1.30.2", OSDistro: "ubuntu"}
		}},
		{name: "image by name", change: func(s *Objects) { s.Template.ImageID = "ubuntu-jammy-kube-v1.30.2" }, want: func(f *Facts) {
			f.Image = helmvalues.Image{ID: c.kubeImage.ID, KubeVersion: "v1.30.2", OSDistro: "ubuntu"}
		}},
		{name: "image without kube_version", change: func(s *Objects) { s.Template.ImageID = c.noKubeImage.ID },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", c.noKubeImage.ID, "kube_version"}},
		{name: "ambiguous image name", change: func(s *Objects) { s.Template.ImageID = "twice" },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", `"twice"`, "2 images", "use the id"}},
		{name: "no such image name", change: func(s *Objects) { s.Template.ImageID = "nope" },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", `"nope"`, "no image"}},
		{name: "unknown image id falls back to name and fails", change: func(s *Objects) { s.Template.ImageID = "0d1f0d1f-0000-4000-8000-000000000000" },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", "0d1f0d1f-0000-4000-8000-000000000000", "no image"}},
		{name: "another project's private image is invisible", change: func(s *Objects) { s.Template.ImageID = c.otherPrivate.ID },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", "no image"}},
		{name: "image not active", change: func(s *Objects) { s.Template.ImageID = "uploading" },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", "queued, not active"}},
		{name: "no image", change: func(s *Objects) { s.Template.ImageID = "" },
			class: "InvalidArgument", errHas: []string{"cluster_template.image_id", "required"}},
		{name: "a worker group's own image, by name", change: func(s *Objects) {
			s.NodeGroups = append(s.NodeGroups,
				helmvalues.NodeGroup{Name: "gpu", Role: "worker", FlavorID: c.small.ID, ImageID: "ubuntu-jammy-kube-v1.30.2"},
				helmvalues.NodeGroup{Name: "gpu2", Role: "worker", FlavorID: c.small.ID, ImageID: "ubuntu-jammy-kube-v1.30.2"},
				// Deleting, or the template's: not looked up.
				helmvalues.NodeGroup{Name: "old", Role: "worker", FlavorID: c.small.ID, ImageID: "nope", Status: "DELETE_IN_PROGRESS"},
				helmvalues.NodeGroup{Name: "same", Role: "worker", FlavorID: c.small.ID, ImageID: c.kubeImage.ID})
		}, want: func(f *Facts) {
			f.NodeGroupImages = map[string]helmvalues.Image{
				"ubuntu-jammy-kube-v1.30.2": {ID: c.kubeImage.ID, KubeVersion: "v1.30.2", OSDistro: "ubuntu"}}
		}},
		{name: "a worker group's image without kube_version", change: func(s *Objects) {
			s.NodeGroups = append(s.NodeGroups, helmvalues.NodeGroup{Name: "gpu", Role: "worker", FlavorID: c.small.ID, ImageID: c.noKubeImage.ID})
		}, class: "InvalidArgument", errHas: []string{"nodegroups[gpu].image_id", c.noKubeImage.ID, "kube_version"}},
		{name: "external network by name", change: func(s *Objects) { s.Template.ExternalNetworkID = "public" }, want: func(f *Facts) {
			f.ExternalNetworkID = c.public.ID
		}},
		{name: "external network by id", change: func(s *Objects) { s.Template.ExternalNetworkID = c.public.ID }, want: func(f *Facts) {
			f.ExternalNetworkID = c.public.ID
		}},
		{name: "internal network given as external", change: func(s *Objects) { s.Template.ExternalNetworkID = c.internal.ID },
			class: "InvalidArgument", errHas: []string{"cluster_template.external_network_id", "not external"}},
		{name: "internal network name given as external", change: func(s *Objects) { s.Template.ExternalNetworkID = "internal" },
			class: "InvalidArgument", errHas: []string{"cluster_template.external_network_id", "no external network"}},
		{name: "fixed network by name from the cluster", change: func(s *Objects) {
			s.Template.FixedNetwork = "lab"
			s.Cluster.FixedNetwork = "private"
		}, want: func(f *Facts) { f.FixedNetworkID = c.private.ID }},
		{name: "fixed network from the template", change: func(s *Objects) { s.Template.FixedNetwork = "lab" }, want: func(f *Facts) {
			f.FixedNetworkID = c.otherNet.ID
		}},
		{name: "ambiguous fixed network", change: func(s *Objects) { s.Cluster.FixedNetwork = "shared" },
			class: "InvalidArgument", errHas: []string{"cluster.fixed_network", "2 networks"}},
		{name: "subnet by name gives its network", change: func(s *Objects) { s.Cluster.FixedSubnet = "private-subnet" }, want: func(f *Facts) {
			f.FixedNetworkID, f.FixedSubnetID = c.private.ID, c.privateSubnet.ID
		}},
		{name: "subnet by id within its network", change: func(s *Objects) {
			s.Template.FixedNetwork, s.Template.FixedSubnet = "private", c.privateSubnet.ID
		}, want: func(f *Facts) { f.FixedNetworkID, f.FixedSubnetID = c.private.ID, c.privateSubnet.ID }},
		{name: "subnet of another network", change: func(s *Objects) {
			s.Cluster.FixedNetwork, s.Cluster.FixedSubnet = "private", c.otherSubnet.ID
		}, class: "InvalidArgument", errHas: []string{"cluster.fixed_subnet", "belongs to network " + c.otherNet.ID}},
		{name: "subnet name looked up within the network", change: func(s *Objects) {
			s.Cluster.FixedNetwork, s.Cluster.FixedSubnet = "private", "lab-subnet"
		}, class: "InvalidArgument", errHas: []string{"cluster.fixed_subnet", "no subnet"}},
		{name: "unknown flavor", change: func(s *Objects) { s.NodeGroups[1].FlavorID = "m9.huge" },
			class: "InvalidArgument", errHas: []string{"nodegroups[default-worker].flavor_id", "m9.huge", "no flavor"}},
		{name: "ambiguous flavor name", change: func(s *Objects) { s.NodeGroups[0].FlavorID = "gpu" },
			class: "InvalidArgument", errHas: []string{"nodegroups[default-master].flavor_id", "2 flavors"}},
		{name: "flavors from the cluster without node groups", change: func(s *Objects) {
			s.NodeGroups = nil
			s.Cluster.MasterFlavorID, s.Template.FlavorID = "m1.medium", "m1.tiny"
		}, class: "InvalidArgument", errHas: []string{"cluster_template.flavor_id", "m1.tiny"}},
		{name: "every problem at once", change: func(s *Objects) {
			s.Template.ImageID, s.Template.ExternalNetworkID, s.Cluster.FixedNetwork = "nope", "nowhere", "nothing"
		}, class: "InvalidArgument", errHas: []string{"cluster_template.image_id", "cluster_template.external_network_id", "cluster.fixed_network"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := base()
			if tt.change != nil {
				tt.change(&spec)
			}
			got, err := c.adapter.Facts(context.Background(), c.caller, spec)
			if tt.want == nil && tt.class == "" {
				tt.class = "ok"
			}
			if tt.want != nil {
				if err != nil {
					t.Fatalf("Facts: %v", err)
				}
				want := Facts{Image: helmvalues.Image{ID: c.kubeImage.ID, KubeVersion: "v1.30.2", OSDistro: "ubuntu"}}
				tt.want(&want)
				for i := range got.VolumeTypes {
					got.VolumeTypes[i].ID = "" // random in the fake
				}
				want.VolumeTypes = volumeTypes
				got.Flavors = nil // TestFactsFlavors checks them
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("Facts =\n%+v\nwant\n%+v", got, want)
				}
				return
			}
			if got := class(err); got != tt.class {
				t.Fatalf("class %s, want %s: %v", got, tt.class, err)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestFlavorMinimums(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		class  string
		errHas string
	}{
		{"no minimums", Config{}, "ok", ""},
		{"RAM", Config{MinFlavorRAMMiB: 4096}, "InvalidArgument", "2048 MiB of RAM, at least 4096"},
		{"vCPUs", Config{MinFlavorVCPUs: 2}, "InvalidArgument", "1 vCPUs, at least 2"},
		{"check off", Config{SkipFlavorCheck: true, MinFlavorRAMMiB: 1 << 20}, "ok", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFakeCloud(t, tt.cfg)
			spec := Objects{
				Template:   helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID},
				NodeGroups: []helmvalues.NodeGroup{{Name: "default-worker", FlavorID: "m1.small"}},
			}
			_, err := c.adapter.Facts(context.Background(), c.caller, spec)
			if got := class(err); got != tt.class {
				t.Fatalf("class %s, want %s: %v", got, tt.class, err)
			}
			if tt.errHas != "" && !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %q does not say %q", err, tt.errHas)
			}
			if tt.cfg.SkipFlavorCheck && c.fake.Requests("compute") != 0 {
				t.Fatalf("flavor check off, yet %d compute requests", c.fake.Requests("compute"))
			}
		})
	}
}

// TestFactsFlavors: Facts returns every node group's flavor with its extra
// specs (GPUs), by the reference the node group holds, id or name, each
// flavor looked up once.
func TestFactsFlavors(t *testing.T) {
	c := newFakeCloud(t, Config{})
	vgpu := c.fake.AddFlavor(openstackfake.Flavor{Name: "g1.vgpu", RAM: 32768, VCPUs: 8, Disk: 80,
		ExtraSpecs: map[string]string{"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A10": "required"}})
	spec := Objects{
		Template: helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID},
		NodeGroups: []helmvalues.NodeGroup{
			{Name: "default-master", Role: "master", FlavorID: "m1.medium"},
			{Name: "default-worker", Role: "worker", FlavorID: "m1.medium"},
			{Name: "gpu", Role: "worker", FlavorID: vgpu.ID},
		},
	}
	facts, err := c.adapter.Facts(context.Background(), c.caller, spec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]helmvalues.Flavor{
		"m1.medium": {ID: c.medium.ID, Name: "m1.medium", VCPUs: 2, RAMMiB: 4096, DiskGiB: 40, ExtraSpecs: map[string]string{}},
		vgpu.ID: {ID: vgpu.ID, Name: "g1.vgpu", VCPUs: 8, RAMMiB: 32768, DiskGiB: 80,
			ExtraSpecs: map[string]string{"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_A10": "required"}},
	}
	if !reflect.DeepEqual(facts.Flavors, want) {
		t.Errorf("flavors %+v\nwant %+v", facts.Flavors, want)
	}
}
