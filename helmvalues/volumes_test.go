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
			res, err := Build(in, DefaultConfig())
			if tt.errors != nil {
				assertErrorNames(t, err, tt.errors)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertChartKeys(t, res.Values)
			assertKubeadmSchema(t, res.Values)
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
