package helmvalues

import (
	"errors"
	"strings"
	"testing"
)

// TestNodeGroupImage: a worker node group whose image_id is not the
// template's runs its own image and Kubernetes version, on every render,
// within the kubelet's version skew; the control plane and the other groups
// keep the cluster's.
func TestNodeGroupImage(t *testing.T) {
	const (
		v129 = "aaaaaaaa-0000-4000-8000-000000000129"
		v131 = "aaaaaaaa-0000-4000-8000-000000000131"
	)
	images := map[string]Image{
		"ubuntu-kube-v1.29.9":  {ID: v129, KubeVersion: "v1.29.9", OSDistro: "ubuntu"},
		"ubuntu-kube-v1.30.2":  {ID: "3f1c2b4a-5d6e-4f70-8192-a3b4c5d6e7f8", KubeVersion: "v1.30.4", OSDistro: "ubuntu"},
		"ubuntu-kube-v1.31.0":  {ID: v131, KubeVersion: "1.31.0", OSDistro: "Ubuntu"},
		"ubuntu-kube-v1.26.0":  {ID: v129, KubeVersion: "1.26.0", OSDistro: "ubuntu"},
		"flatcar-kube-v1.29.9": {ID: v129, KubeVersion: "1.29.9", OSDistro: "flatcar"},
		"no-version":           {ID: v129, KubeVersion: "latest", OSDistro: "ubuntu"},
	}
	tests := []struct {
		name        string
		image       string // the extra group's image_id; "" keeps the template's
		wantImage   string // nodeGroups[extra].machineImageId, "" for unset
		wantVersion string // nodeGroups[extra].kubernetesVersion, "" for unset
		wantErr     string // in the error on nodegroups[extra].image_id
	}{
		{name: "the template's image: nothing of its own", image: ""},
		{name: "an older minor (a group not yet upgraded)", image: "ubuntu-kube-v1.29.9", wantImage: v129, wantVersion: "1.29.9"},
		{name: "another reference to the same image: nothing of its own", image: "ubuntu-kube-v1.30.2"},
		{name: "a newer minor than the control plane", image: "ubuntu-kube-v1.31.0", wantErr: "must not be newer than the control plane's v1.30"},
		{name: "four minors older", image: "ubuntu-kube-v1.26.0", wantErr: "at most 3 minor versions older"},
		{name: "another os_distro", image: "flatcar-kube-v1.29.9", wantErr: `cluster's os_distro "ubuntu"`},
		{name: "not a version", image: "no-version", wantErr: "kube_version property"},
		{name: "not resolved", image: "unknown", wantErr: "an image the driver resolved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := minimalInput(t)
			extra := in.NodeGroups[1]
			extra.UUID, extra.Name, extra.IsDefault = "33333333-3333-4333-8333-333333333333", "extra", false
			if tc.image != "" {
				extra.ImageID = tc.image
			}
			in.NodeGroups = append(in.NodeGroups, extra)
			in.NodeGroupImages = images
			res, err := Build(in, DefaultConfig())
			if tc.wantErr != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), `nodegroups[extra].image_id: invalid value "`+tc.image+`"`) ||
					!strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a FieldError on nodegroups[extra].image_id with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			groups := map[string]map[string]any{}
			for _, g := range res.Values["nodeGroups"].([]any) {
				m := g.(map[string]any)
				groups[m["name"].(string)] = m
			}
			for name, want := range map[string][2]string{"extra": {tc.wantImage, tc.wantVersion}, "default-worker": {"", ""}} {
				img, _ := groups[name]["machineImageId"].(string)
				ver, _ := groups[name]["kubernetesVersion"].(string)
				if img != want[0] || ver != want[1] {
					t.Errorf("node group %s: machineImageId %q, kubernetesVersion %q; want %q, %q", name, img, ver, want[0], want[1])
				}
			}
			if res.Values["kubernetesVersion"] != "1.30.4" || res.Values["machineImageId"] != in.Image.ID {
				t.Errorf("the cluster's version and image moved: %v, %v", res.Values["kubernetesVersion"], res.Values["machineImageId"])
			}
		})
	}
}
