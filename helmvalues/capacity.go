package helmvalues

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The cluster autoscaler's Cluster API provider reads a node group's node
// shape from these MachineDeployment annotations when the group has no node
// to look at (scale from zero). Names and value formats are the provider's
// (cluster-autoscaler/cloudprovider/clusterapi: cpu, memory and
// ephemeral-disk are resource.Quantity strings, gpu-count and maxPods whole
// numbers, labels "k=v,..." and taints "k=v:Effect,...").
const (
	CapacityCPU           = "capacity.cluster-autoscaler.kubernetes.io/cpu"
	CapacityMemory        = "capacity.cluster-autoscaler.kubernetes.io/memory"
	CapacityEphemeralDisk = "capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk"
	CapacityMaxPods       = "capacity.cluster-autoscaler.kubernetes.io/maxPods"
	CapacityGPUCount      = "capacity.cluster-autoscaler.kubernetes.io/gpu-count"
	CapacityGPUType       = "capacity.cluster-autoscaler.kubernetes.io/gpu-type"
	CapacityLabels        = "capacity.cluster-autoscaler.kubernetes.io/labels"
	CapacityTaints        = "capacity.cluster-autoscaler.kubernetes.io/taints"
)

// KubeletMaxPods is kubelet's default maxPods; the chart does not change it
// and no label sets it.
const KubeletMaxPods = 110

// DefaultGPUResourceName is the extended resource GPU device plugins
// advertise (NVIDIA's; NVIDIA's vGPU guest driver uses it too).
const DefaultGPUResourceName = "nvidia.com/gpu"

// Flavor is what a node group's Nova flavor gives its nodes, as the sidecar
// looked it up.
type Flavor struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	VCPUs   int    `json:"vcpus"`
	RAMMiB  int    `json:"ram"`
	DiskGiB int    `json:"disk"`
	// ExtraSpecs are the flavor's extra specs (GPUs are read from them);
	// nil when Nova would not show them to the caller.
	ExtraSpecs map[string]string `json:"extra_specs,omitempty"`
}

// gpuSettings are the configuration's say on what a GPU is.
type gpuSettings struct {
	resourceName string
	pciAliases   map[string]bool
}

func (c Config) gpuSettings() gpuSettings {
	s := gpuSettings{resourceName: c.GPUResourceName, pciAliases: map[string]bool{}}
	if s.resourceName == "" {
		s.resourceName = DefaultGPUResourceName
	}
	for _, a := range c.GPUPCIAliases {
		s.pciAliases[a] = true
	}
	return s
}

// flavorGPUs counts the GPUs a flavor's extra specs give a server, in the two
// forms Nova has for them: vGPUs requested from placement
// (resources:VGPU=N, also with a request group suffix, resources1:VGPU=N)
// and PCI passthrough (pci_passthrough:alias=name:count[,name:count], a
// missing count being 1), of which only the aliases the configuration names
// as GPUs count (an alias may as well be a NIC). A value Nova would not
// accept is an error naming the extra spec.
func flavorGPUs(specs map[string]string, gpu gpuSettings) (int, error) {
	total := 0
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := specs[k]
		switch {
		case isVGPUSpec(k):
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return 0, fmt.Errorf("extra spec %s=%q: expected a whole number of vGPUs", k, v)
			}
			total += n
		case k == "pci_passthrough:alias":
			n, err := pciGPUs(v, gpu.pciAliases)
			if err != nil {
				return 0, fmt.Errorf("extra spec %s=%q: %w", k, v, err)
			}
			total += n
		}
	}
	return total, nil
}

// isVGPUSpec: resources:VGPU or resources<group>:VGPU (granular requests).
func isVGPUSpec(key string) bool {
	prefix, class, ok := strings.Cut(key, ":")
	return ok && class == "VGPU" && strings.HasPrefix(prefix, "resources")
}

// pciGPUs counts the devices of the GPU aliases in a pci_passthrough:alias
// value.
func pciGPUs(value string, gpuAliases map[string]bool) (int, error) {
	total := 0
	for _, part := range strings.Split(value, ",") {
		name, count, hasCount := strings.Cut(strings.TrimSpace(part), ":")
		if name == "" {
			return 0, fmt.Errorf("expected alias[:count] entries separated by commas")
		}
		n := 1
		if hasCount {
			var err error
			if n, err = strconv.Atoi(count); err != nil || n < 1 {
				return 0, fmt.Errorf("alias %s: expected a count of at least 1, got %q", name, count)
			}
		}
		if gpuAliases[name] {
			total += n
		}
	}
	return total, nil
}

// nodeShape is what the autoscaler is told about a node group's nodes.
type nodeShape struct {
	flavor Flavor
	// rootVolumeGiB is the boot volume's size when the nodes boot from a
	// volume (it then is their root disk, not the flavor's); 0 otherwise.
	rootVolumeGiB int
	labels        map[string]any // kubelet's --node-labels
	taints        []any          // as workerTaints gives them
}

// capacityAnnotations are the scale-from-zero annotations for one node
// shape. A flavor without vCPUs or RAM cannot describe a node: an error.
func capacityAnnotations(s nodeShape, gpu gpuSettings) (map[string]string, error) {
	fl := s.flavor
	if fl.VCPUs < 1 || fl.RAMMiB < 1 {
		return nil, fmt.Errorf("flavor %s has %d vCPUs and %d MiB of RAM: the autoscaler needs both", fl.Name, fl.VCPUs, fl.RAMMiB)
	}
	out := map[string]string{
		CapacityCPU:     strconv.Itoa(fl.VCPUs),
		CapacityMemory:  fmt.Sprintf("%dMi", fl.RAMMiB),
		CapacityMaxPods: strconv.Itoa(KubeletMaxPods),
	}
	switch {
	case s.rootVolumeGiB > 0:
		out[CapacityEphemeralDisk] = fmt.Sprintf("%dGi", s.rootVolumeGiB)
	case fl.DiskGiB > 0:
		out[CapacityEphemeralDisk] = fmt.Sprintf("%dGi", fl.DiskGiB)
	}
	gpus, err := flavorGPUs(fl.ExtraSpecs, gpu)
	if err != nil {
		return nil, fmt.Errorf("flavor %s %w", fl.Name, err)
	}
	if gpus > 0 {
		out[CapacityGPUCount] = strconv.Itoa(gpus)
		out[CapacityGPUType] = gpu.resourceName
	}
	if v := joinLabels(s.labels); v != "" {
		out[CapacityLabels] = v
	}
	if v := joinTaints(s.taints); v != "" {
		out[CapacityTaints] = v
	}
	return out, nil
}

// joinLabels writes labels as "k=v,k=v", sorted.
func joinLabels(labels map[string]any) string {
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// joinTaints writes taints as "key=value:Effect" (or "key:Effect"), in order.
func joinTaints(taints []any) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		m, _ := t.(map[string]any)
		key, effect := fmt.Sprint(m["key"]), fmt.Sprint(m["effect"])
		if v, ok := m["value"]; ok && fmt.Sprint(v) != "" {
			key += "=" + fmt.Sprint(v)
		}
		parts = append(parts, key+":"+effect)
	}
	return strings.Join(parts, ",")
}

// groupFlavor is the looked-up flavor a worker node group boots (its own
// flavor_id, else the cluster's, else the template's), if Facts found it.
func (b *builder) groupFlavor(ng NodeGroup) (Flavor, bool) {
	for _, ref := range []string{ng.FlavorID, b.in.Cluster.FlavorID, b.in.ClusterTemplate.FlavorID} {
		if ref != "" {
			fl, ok := b.in.Flavors[ref]
			return fl, ok
		}
	}
	return Flavor{}, false
}

// capacity records the scale-from-zero annotations of an autoscaled node
// group's MachineDeployment (name is its chart name). Every autoscaled group
// gets them, not only those at minimum 0: the autoscaler reads them only
// when the group has no node, and annotating a MachineDeployment rolls no
// machine, so a later change of the minimum changes nothing but the
// autoscaler's bounds. A group whose flavor is unknown gets none (its
// minimum is at least 1, see scaleFromZero).
func (b *builder) capacity(ng NodeGroup, name string, values, volume map[string]any) {
	if values["autoscale"] != true {
		return
	}
	fl, ok := b.groupFlavor(ng)
	if !ok {
		return
	}
	shape := nodeShape{flavor: fl, labels: b.workerNodeLabels(ng), taints: b.workerTaints(ng)}
	shape.labels[nodeGroupLabel] = name
	if size, ok := volume["diskSize"].(int); ok {
		shape.rootVolumeGiB = size
	}
	ann, err := capacityAnnotations(shape, b.cfg.gpuSettings())
	if err != nil {
		b.p.field(nodeGroupField(ng, "flavor_id"), fl.ID, "a flavor whose node capacity the cluster autoscaler can be told: "+err.Error())
		return
	}
	if b.machineAnnotations == nil {
		b.machineAnnotations = map[string]map[string]string{}
	}
	b.machineAnnotations[name] = ann
}

// nodeGroupLabel is the kubelet label the chart gives every node of a node
// group (its chart name).
const nodeGroupLabel = "capi.stackhpc.com/node-group"

// extendedResourceName is what Kubernetes accepts as an extended resource
// name: a domain prefix, "/", a name.
var extendedResourceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)

// validateGPUConfig checks the options that say what a GPU is.
func validateGPUConfig(cfg Config, p *problems) {
	if cfg.GPUResourceName != "" && !extendedResourceName.MatchString(cfg.GPUResourceName) {
		p.config("values.gpuResourceName", cfg.GPUResourceName, "expected an extended resource name such as "+DefaultGPUResourceName)
	}
	for _, a := range cfg.GPUPCIAliases {
		if a == "" || strings.ContainsAny(a, ",: \t") {
			p.config("values.gpuPCIAliases", a, "expected a Nova PCI alias name as nova.conf's [pci] alias names it")
		}
	}
}
