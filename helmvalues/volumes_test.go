package helmvalues

import (
	"reflect"
	"testing"
)

// TestContainerdVolume: docker_volume_size (the node group's, else the
// cluster's, else the template's) gives worker node groups a containerd
// volume, typed by docker_volume_type; bad sizes and types are refused.
func TestContainerdVolume(t *testing.T) {
	size := func(n int) *int { return &n }
	tests := []struct {
		name   string
		modify func(in *Input)
		device map[string]any // nodeGroups[0].additionalBlockDevices.containerd (nil: none)
		errors []string
	}{
		{"none", func(in *Input) {}, nil, nil},
		{"template size", func(in *Input) { in.ClusterTemplate.DockerVolumeSize = size(30) },
			map[string]any{"size": 30.0, "type": "Volume"}, nil},
		{"node group size over the cluster's", func(in *Input) {
			in.Cluster.DockerVolumeSize = size(30)
			in.NodeGroups[1].DockerVolumeSize = size(80)
		}, map[string]any{"size": 80.0, "type": "Volume"}, nil},
		{"node group size 0 turns it off", func(in *Input) {
			in.Cluster.DockerVolumeSize = size(30)
			in.NodeGroups[1].DockerVolumeSize = size(0)
		}, nil, nil},
		{"volume type", func(in *Input) {
			in.Cluster.DockerVolumeSize = size(30)
			in.Cluster.Labels = map[string]string{"docker_volume_type": "ssd"}
			in.VolumeTypes = []VolumeType{{ID: "c1d2e3f4-0000-4000-8000-000000000009", Name: "ssd"}}
		}, map[string]any{"size": 30.0, "type": "Volume", "volumeType": "ssd"}, nil},
		{"unknown volume type", func(in *Input) {
			in.Cluster.DockerVolumeSize = size(30)
			in.NodeGroups[1].Labels = map[string]string{"docker_volume_type": "gold"}
			in.VolumeTypes = []VolumeType{{ID: "c1d2e3f4-0000-4000-8000-000000000009", Name: "ssd"}}
		}, nil, []string{"nodegroups[default-worker].labels.docker_volume_type", `"gold"`, "one of the project's Cinder volume types: ssd"}},
		{"negative size", func(in *Input) { in.NodeGroups[1].DockerVolumeSize = size(-1) }, nil,
			[]string{"nodegroups[default-worker].docker_volume_size", `"-1"`, "between 0 (no volume) and 16384"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput(t)
			tt.modify(&in)
			res, ok := buildChecked(t, in, DefaultConfig(), tt.errors)
			if !ok {
				return
			}
			group := res.Values["nodeGroups"].([]any)[0].(map[string]any)
			device, _ := lookup(group, "additionalBlockDevices", "containerd")
			if !reflect.DeepEqual(device, anyOrNil(tt.device)) {
				t.Fatalf("containerd device %v, want %v", device, tt.device)
			}
			mounts, _ := lookup(group, "kubeadmConfigSpec", "mounts")
			commands, _ := lookup(group, "kubeadmConfigSpec", "preKubeadmCommands")
			if tt.device == nil {
				if mounts != nil || commands != nil {
					t.Errorf("no volume, yet mounts %v and commands %v", mounts, commands)
				}
				return
			}
			wantMounts := []any{[]any{"LABEL=containerd_disk", "/var/lib/containerd"}}
			if !reflect.DeepEqual(mounts, wantMounts) || !reflect.DeepEqual(commands, []any{"systemctl restart containerd"}) {
				t.Errorf("mounts %v, commands %v", mounts, commands)
			}
			if _, ok := lookup(res.Values, "controlPlane", "additionalBlockDevices"); ok {
				t.Error("the control plane got a containerd volume")
			}
		})
	}
}

func anyOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// TestKeepDeployedContainerdVolumes: a deployed worker node group without a
// containerd volume keeps none (no roll at the next update); one deployed
// with it and a new one keep theirs.
func TestKeepDeployedContainerdVolumes(t *testing.T) {
	withVolume := func(name string) map[string]any {
		return map[string]any{
			"name":                   name,
			"additionalBlockDevices": map[string]any{"containerd": map[string]any{"size": 30.0, "type": "Volume"}},
			"kubeadmConfigSpec": map[string]any{
				"diskSetup":          map[string]any{"filesystems": []any{}},
				"mounts":             []any{[]any{"LABEL=containerd_disk", "/var/lib/containerd"}},
				"preKubeadmCommands": []any{"systemctl restart containerd"},
				"joinConfiguration":  map[string]any{"nodeRegistration": map[string]any{"taints": []any{}}},
			},
		}
	}
	deployed := map[string]any{"nodeGroups": []any{
		map[string]any{"name": "old"},
		withVolume("kept"),
	}}
	values := map[string]any{"nodeGroups": []any{withVolume("old"), withVolume("kept"), withVolume("new")}}
	KeepDeployedContainerdVolumes(deployed, values)
	groups := values["nodeGroups"].([]any)
	want := map[string]any{"name": "old", "kubeadmConfigSpec": map[string]any{
		"joinConfiguration": map[string]any{"nodeRegistration": map[string]any{"taints": []any{}}}}}
	if !reflect.DeepEqual(groups[0], want) {
		t.Errorf("old node group: %v, want %v", groups[0], want)
	}
	for i, name := range []string{"kept", "new"} {
		if !reflect.DeepEqual(groups[i+1], withVolume(name)) {
			t.Errorf("%s node group lost its volume: %v", name, groups[i+1])
		}
	}
}
