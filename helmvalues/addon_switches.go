package helmvalues

// addonSwitches maps the labels that turn optional addons on or off, or
// tune them: Cilium's Hubble and the GPU operators (Manila is manila.go's).
// Switches are written only when a label is given, so clusters without them
// keep the chart's defaults.
func (b *builder) addonSwitches() {
	b.hubble()
	for _, gpu := range []struct{ label, key string }{
		{"nvidia_gpu_operator_enabled", "nvidiaGPUOperator"},
		{"amd_gpu_operator_enabled", "amdGPUOperator"},
	} {
		if b.labels.given[gpu.label] {
			put(b.values, b.labels.boolean(gpu.label), "addons", gpu.key, "enabled")
		}
	}
}

// hubble turns on Cilium's Hubble with its relay and UI (reached through
// kubectl port-forward; the chart exposes no Service outside the cluster).
// Each key is written on its own so other Cilium values stay.
func (b *builder) hubble() {
	if !b.labels.boolean("cilium_hubble_ui_enabled") {
		return
	}
	if b.cni != "cilium" {
		b.warn("label cilium_hubble_ui_enabled has no effect: the CNI is %s, not cilium", b.cni)
		return
	}
	for _, key := range [][]string{{"enabled"}, {"relay", "enabled"}, {"ui", "enabled"}} {
		path := append([]string{"addons", "cni", "cilium", "release", "values", "hubble"}, key...)
		put(b.values, true, path...)
	}
}
