package helmvalues

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFlavorGPUs(t *testing.T) {
	gpu := Config{GPUPCIAliases: []string{"a100", "t4"}}.gpuSettings()
	tests := []struct {
		name  string
		specs map[string]string
		want  int
		err   string // substring of the error; "" for none
	}{
		{"no extra specs", nil, 0, ""},
		{"unrelated extra specs", map[string]string{"hw:cpu_policy": "dedicated", "quota:disk_read_iops_sec": "1000"}, 0, ""},
		{"vGPU from placement", map[string]string{"resources:VGPU": "1"}, 1, ""},
		{"vGPU in a request group", map[string]string{"resources1:VGPU": "2", "trait1:CUSTOM_A100": "required"}, 2, ""},
		{"vGPU zero", map[string]string{"resources:VGPU": "0"}, 0, ""},
		{"other placement resources are not GPUs", map[string]string{"resources:VCPU": "4", "resources:CUSTOM_BAREMETAL": "1"}, 0, ""},
		{"PCI alias with a count", map[string]string{"pci_passthrough:alias": "a100:2"}, 2, ""},
		{"PCI alias without a count is one", map[string]string{"pci_passthrough:alias": "t4"}, 1, ""},
		{"PCI aliases that are not GPUs are not counted", map[string]string{"pci_passthrough:alias": "a100:2, mlx5-vf:1,t4:1"}, 3, ""},
		{"vGPU and PCI add up", map[string]string{"resources:VGPU": "1", "pci_passthrough:alias": "t4:1"}, 2, ""},
		{"vGPU count not a number", map[string]string{"resources:VGPU": "one"}, 0, "resources:VGPU=\"one\": expected a whole number"},
		{"vGPU count negative", map[string]string{"resources:VGPU": "-1"}, 0, "expected a whole number"},
		{"PCI count not a number", map[string]string{"pci_passthrough:alias": "a100:two"}, 0, "alias a100: expected a count of at least 1, got \"two\""},
		{"PCI count zero", map[string]string{"pci_passthrough:alias": "a100:0"}, 0, "at least 1"},
		{"PCI alias empty", map[string]string{"pci_passthrough:alias": "a100:1,,t4"}, 0, "alias[:count]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := flavorGPUs(tt.specs, gpu)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("flavorGPUs(%v): %v", tt.specs, err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("flavorGPUs(%v) error %v, want one containing %q", tt.specs, err, tt.err)
			case got != tt.want:
				t.Errorf("flavorGPUs(%v) = %d, want %d", tt.specs, got, tt.want)
			}
		})
	}
}

func TestCapacityAnnotations(t *testing.T) {
	medium := Flavor{ID: "3", Name: "m1.medium", VCPUs: 2, RAMMiB: 4096, DiskGiB: 40}
	gpuFlavor := Flavor{ID: "g", Name: "g1.xlarge", VCPUs: 16, RAMMiB: 131072, DiskGiB: 0,
		ExtraSpecs: map[string]string{"pci_passthrough:alias": "a100:4"}}
	tests := []struct {
		name  string
		shape nodeShape
		cfg   Config
		want  map[string]string
		err   string
	}{
		{"flavor disk", nodeShape{flavor: medium}, Config{},
			map[string]string{CapacityCPU: "2", CapacityMemory: "4096Mi", CapacityEphemeralDisk: "40Gi", CapacityMaxPods: "110"}, ""},
		{"boot volume replaces the flavor disk", nodeShape{flavor: medium, rootVolumeGiB: 100}, Config{},
			map[string]string{CapacityCPU: "2", CapacityMemory: "4096Mi", CapacityEphemeralDisk: "100Gi", CapacityMaxPods: "110"}, ""},
		{"no disk: no ephemeral-disk", nodeShape{flavor: Flavor{Name: "d0", VCPUs: 1, RAMMiB: 2048}}, Config{},
			map[string]string{CapacityCPU: "1", CapacityMemory: "2048Mi", CapacityMaxPods: "110"}, ""},
		{"PCI GPUs with a configured resource name, labels and taints", nodeShape{flavor: gpuFlavor, rootVolumeGiB: 200,
			labels: map[string]any{"b": "2", "a": "1"},
			taints: []any{map[string]any{"key": "nvidia.com/gpu", "effect": "NoSchedule"}, map[string]any{"key": "spot", "value": "yes", "effect": "PreferNoSchedule"}}},
			Config{GPUPCIAliases: []string{"a100"}, GPUResourceName: "example.com/a100"},
			map[string]string{CapacityCPU: "16", CapacityMemory: "131072Mi", CapacityEphemeralDisk: "200Gi", CapacityMaxPods: "110",
				CapacityGPUCount: "4", CapacityGPUType: "example.com/a100", CapacityLabels: "a=1,b=2",
				CapacityTaints: "nvidia.com/gpu:NoSchedule,spot=yes:PreferNoSchedule"}, ""},
		{"PCI alias not configured as a GPU", nodeShape{flavor: gpuFlavor}, Config{},
			map[string]string{CapacityCPU: "16", CapacityMemory: "131072Mi", CapacityMaxPods: "110"}, ""},
		{"no vCPUs", nodeShape{flavor: Flavor{Name: "odd", RAMMiB: 2048}}, Config{}, nil, "flavor odd has 0 vCPUs"},
		{"bad extra spec names the flavor", nodeShape{flavor: Flavor{Name: "bad", VCPUs: 1, RAMMiB: 1024, ExtraSpecs: map[string]string{"resources:VGPU": "x"}}},
			Config{}, nil, "flavor bad extra spec resources:VGPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := capacityAnnotations(tt.shape, tt.cfg.gpuSettings())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestGPUConfigValidation(t *testing.T) {
	tests := []struct {
		cfg   Config
		field string // "" when valid
	}{
		{Config{GPUResourceName: "nvidia.com/gpu", GPUPCIAliases: []string{"a100", "t4-pf"}}, ""},
		{Config{GPUResourceName: "amd.com/gpu"}, ""},
		{Config{GPUResourceName: "gpu"}, "values.gpuResourceName"},
		{Config{GPUResourceName: "Nvidia.com/gpu"}, "values.gpuResourceName"},
		{Config{GPUPCIAliases: []string{"a100:2"}}, "values.gpuPCIAliases"},
		{Config{GPUPCIAliases: []string{""}}, "values.gpuPCIAliases"},
	}
	for _, tt := range tests {
		err := ValidateConfig(tt.cfg)
		var ce *ConfigError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: %v", tt.cfg, err)
		case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field):
			t.Errorf("%+v: %v, want a ConfigError on %s", tt.cfg, err, tt.field)
		}
	}
}
