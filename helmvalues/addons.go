package helmvalues

import (
	"strings"
)

// addons maps the OpenStack cloud-config for load balancers, monitoring,
// ingress and Manila CSI. The CNI is mapped by networkDriver, Cinder CSI by
// storageClasses.
func (b *builder) addons() {
	provider := b.labels.str("octavia_provider")
	algorithm := b.labels.str("octavia_lb_algorithm")
	isOVN := strings.EqualFold(provider, "ovn")
	switch {
	case algorithm == "" && isOVN:
		algorithm = "SOURCE_IP_PORT"
	case algorithm == "":
		algorithm = "ROUND_ROBIN"
	case isOVN && algorithm != "SOURCE_IP_PORT":
		b.p.field("labels.octavia_lb_algorithm", algorithm, "SOURCE_IP_PORT, the only algorithm of the ovn provider (octavia_provider)")
	}
	lb := map[string]any{
		"lb-method":      algorithm,
		"create-monitor": b.labels.boolean("octavia_lb_healthcheck"),
	}
	if provider != "" {
		lb["lb-provider"] = provider
	}
	put(b.values, lb, "addons", "openstack", "cloudConfig", "LoadBalancer")

	put(b.values, b.labels.boolean("monitoring_enabled"), "addons", "monitoring", "enabled")

	switch b.labels.str("ingress_controller") {
	case "traefik":
		put(b.values, map[string]any{"enabled": true, "traefik": map[string]any{"enabled": true}, "nginx": map[string]any{"enabled": false}}, "addons", "ingress")
	case "nginx":
		b.warn("ingress_controller nginx: ingress-nginx is retired upstream; prefer traefik")
		put(b.values, map[string]any{"enabled": true, "traefik": map[string]any{"enabled": false}, "nginx": map[string]any{"enabled": true}}, "addons", "ingress")
	default:
		put(b.values, false, "addons", "ingress", "enabled")
	}

	b.manila()
}
