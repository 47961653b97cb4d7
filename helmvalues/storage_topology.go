package helmvalues

// cinderTopologyKey is the node label Cinder CSI's node plugin sets to the
// node's availability zone.
const cinderTopologyKey = "topology.cinder.csi.openstack.org/zone"

// cinderAllowedTopologies is the StorageClasses' allowedTopologies for the
// site option values.csiCinderAllowedTopologies (StackHPC's
// csi_cinder_allowed_topologies): volumes are provisioned for, and pods
// using them scheduled to, nodes in those availability zones only. Nil when
// the option is not set.
func (b *builder) cinderAllowedTopologies() []any {
	if len(b.cfg.CSICinderAllowedTopologies) == 0 {
		return nil
	}
	return []any{map[string]any{"matchLabelExpressions": []any{map[string]any{
		"key": cinderTopologyKey, "values": stringsToAny(b.cfg.CSICinderAllowedTopologies),
	}}}}
}

// validateCinderTopologies checks values.csiCinderAllowedTopologies: plain
// availability zone names, each once.
func validateCinderTopologies(cfg Config, p *problems) {
	seen := map[string]bool{}
	for _, zone := range cfg.CSICinderAllowedTopologies {
		switch msg := checkChartScalar(zone); {
		case msg != "":
			p.config("values.csiCinderAllowedTopologies", zone, "expected availability zone names: "+msg)
		case seen[zone]:
			p.config("values.csiCinderAllowedTopologies", zone, "expected each availability zone once")
		}
		seen[zone] = true
	}
}

// cinderTopologies limits the default Cinder StorageClass to the configured
// zones. Chart 0.27 breaks the YAML of additional StorageClasses that have
// allowedTopologies, so those stay unlimited, with a warning.
func (b *builder) cinderTopologies() {
	topologies := b.cinderAllowedTopologies()
	if topologies == nil {
		return
	}
	if _, ok := lookup(b.values, "addons", "openstack", "csiCinder", "defaultStorageClass"); !ok {
		return
	}
	put(b.values, topologies, "addons", "openstack", "csiCinder", "defaultStorageClass", "allowedTopologies")
	extra, _ := lookup(b.values, "addons", "openstack", "csiCinder", "additionalStorageClasses")
	if list, _ := extra.([]any); len(list) > 0 {
		b.warn("values.csiCinderAllowedTopologies limits only the default StorageClass: chart %s cannot render allowedTopologies in additional StorageClasses", ChartVersion)
	}
}
