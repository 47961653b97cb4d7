package helmvalues

// chartMirroredRegistries are the keys of the chart's default registryMirrors.
var chartMirroredRegistries = []string{"docker.io", "ghcr.io", "nvcr.io", "quay.io", "registry.k8s.io"}

// registries maps containerd registry mirrors and trusted CAs.
//
// The chart's default mirrors are Azimuth's copies on quay.io, which a Magnum
// deployment has no reason to depend on, so they are removed (Helm deletes a
// chart default whose value is null) unless the configuration keeps them.
// Mirrors come from the container_infra_prefix label, then the site's
// configured mirrors; Helm merges the values map into the chart's, so each
// chart registry without a mirror of ours is nulled explicitly.
func (b *builder) registries() {
	mirrors := map[string][]any{}
	var order []string
	add := func(registry, url string) {
		for _, existing := range mirrors[registry] {
			if existing == url {
				return
			}
		}
		if _, ok := mirrors[registry]; !ok {
			order = append(order, registry)
		}
		mirrors[registry] = append(mirrors[registry], url)
	}
	if prefix := b.labels.str("container_infra_prefix"); prefix != "" {
		host, path, _ := parseRegistryPrefix(prefix)
		root := "https://" + host + "/v2/"
		if path != "" {
			root += path + "/"
		}
		for _, registry := range b.cfg.mirroredRegistries() {
			add(registry, root+registry)
		}
	}
	for _, registry := range sortedKeys(b.cfg.RegistryMirrors) {
		for _, url := range b.cfg.RegistryMirrors[registry] {
			add(registry, url)
		}
	}

	switch {
	case len(order) > 0:
		values := map[string]any{}
		for _, registry := range order {
			values[registry] = mirrors[registry]
		}
		if !b.cfg.KeepChartRegistryMirrors {
			for _, registry := range chartMirroredRegistries {
				if _, ok := values[registry]; !ok {
					values[registry] = nil
				}
			}
		}
		put(b.values, values, "registryMirrors")
	case !b.cfg.KeepChartRegistryMirrors:
		put(b.values, nil, "registryMirrors")
	}

	if len(b.cfg.TrustedCAs) > 0 {
		cas := map[string]any{}
		for name, pem := range b.cfg.TrustedCAs {
			cas[name] = pem
		}
		put(b.values, cas, "trustedCAs")
	}
}
