package helmvalues

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// Chart 0.27 defaults the mapping needs to reason about (overlaps, no_proxy).
const (
	chartPodCIDR       = "172.16.0.0/13"
	chartServiceCIDR   = "172.24.0.0/13"
	chartServiceDomain = "cluster.local"
)

// networkDriver maps the template's network_driver (or the label
// capi_network_driver, for Magnum 15 whose API refuses cilium there) to the
// chart's CNI. Magnum's API fills in "flannel" when a template names none,
// and the chart renders no CNI at all for a type it does not know, so
// flannel and empty get the chart's default, Calico, with a warning;
// anything else is refused.
func (b *builder) networkDriver() {
	driver := b.in.ClusterTemplate.NetworkDriver
	if label := b.labels.str("capi_network_driver"); label != "" {
		driver = label
	}
	switch driver {
	case "calico", "cilium":
		b.cni = driver
		put(b.values, driver, "addons", "cni", "type")
	case "", "flannel":
		b.cni = "calico"
		shown := driver
		if shown == "" {
			shown = "(none)"
		}
		b.warn("network_driver %s: the cluster gets the chart's default CNI, calico (chart %s installs calico or cilium only)", shown, ChartVersion)
	default:
		b.p.field("cluster_template.network_driver", driver, "calico or cilium (flannel and empty mean calico)")
	}
}

// kubeNetwork maps the pod and service networks and the DNS domain. Nothing
// is sent unless a label asks for it: these cannot change on a live cluster.
func (b *builder) kubeNetwork() {
	podLabel, otherLabel := "calico_ipv4pool", "cilium_ipv4pool"
	if b.cni == "cilium" {
		podLabel, otherLabel = otherLabel, podLabel
	}
	if b.labels.given[otherLabel] && b.cni != "" {
		b.warn("label %s is ignored: the CNI is %s (use %s)", otherLabel, b.cni, podLabel)
	}
	b.podCIDR, b.svcCIDR, b.svcDomain = chartPodCIDR, chartServiceCIDR, chartServiceDomain
	if pods := b.labels.str(podLabel); pods != "" {
		b.podCIDR = pods
		put(b.values, []any{pods}, "kubeNetwork", "pods", "cidrBlocks")
	}
	if services := b.labels.str("service_cluster_ip_range"); services != "" {
		b.svcCIDR = services
		put(b.values, []any{services}, "kubeNetwork", "services", "cidrBlocks")
	}
	if domain := b.labels.str("dns_cluster_domain"); domain != "" {
		b.svcDomain = domain
		put(b.values, domain, "kubeNetwork", "serviceDomain")
	}
	if overlaps(b.podCIDR, b.svcCIDR) {
		b.p.field("labels.service_cluster_ip_range", b.svcCIDR, fmt.Sprintf("a CIDR that does not overlap the pod network %s", b.podCIDR))
	}
}

func overlaps(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	return errA == nil && errB == nil && pa.Overlaps(pb)
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// neutronID picks the id of a network or subnet: the one the driver resolved,
// else the cluster's value, else the template's, which must then already be
// an id (names are resolved by the driver, not here).
func (b *builder) neutronID(resolved, resolvedField string, candidates ...[2]string) string {
	if resolved != "" {
		if msg := checkID(resolved); msg != "" {
			b.p.field(resolvedField, resolved, msg)
			return ""
		}
		return resolved
	}
	for _, c := range candidates {
		value, field := c[0], c[1]
		if value == "" {
			continue
		}
		if !uuidPattern.MatchString(value) {
			b.p.field(field, value, "a Neutron id; a name must be resolved by the driver into "+resolvedField)
			return ""
		}
		return value
	}
	return ""
}

// clusterNetworking maps the external network, the cluster's own network or
// subnet, the CIDR of a network created for it and the DNS servers.
func (b *builder) clusterNetworking() {
	t, c := b.in.ClusterTemplate, b.in.Cluster
	if id := b.neutronID(b.in.ExternalNetworkID, "external_network_id",
		[2]string{t.ExternalNetworkID, "cluster_template.external_network_id"}); id != "" {
		put(b.values, id, "clusterNetworking", "externalNetworkId")
	}
	if id := b.neutronID(b.in.FixedNetworkID, "fixed_network_id",
		[2]string{c.FixedNetwork, "cluster.fixed_network"}, [2]string{t.FixedNetwork, "cluster_template.fixed_network"}); id != "" {
		b.hasFixedNw = true
		put(b.values, map[string]any{"id": id}, "clusterNetworking", "internalNetwork", "networkFilter")
	}
	if id := b.neutronID(b.in.FixedSubnetID, "fixed_subnet_id",
		[2]string{c.FixedSubnet, "cluster.fixed_subnet"}, [2]string{t.FixedSubnet, "cluster_template.fixed_subnet"}); id != "" {
		b.hasFixedNw = true
		put(b.values, map[string]any{"id": id}, "clusterNetworking", "internalNetwork", "subnetFilter")
	}

	// The chart only uses nodeCidr when it creates the network; StackHPC
	// always sends it, and so do we.
	if cidr := b.labels.str("fixed_subnet_cidr"); cidr != "" {
		put(b.values, cidr, "clusterNetworking", "internalNetwork", "nodeCidr")
		if !b.hasFixedNw {
			b.nodeCIDR = cidr
			for _, other := range []struct{ cidr, label string }{{b.podCIDR, "pod network"}, {b.svcCIDR, "service network"}} {
				if overlaps(cidr, other.cidr) {
					b.p.field("labels.fixed_subnet_cidr", cidr, fmt.Sprintf("a CIDR that does not overlap the %s %s", other.label, other.cidr))
				}
			}
		}
	}

	if raw := strings.TrimSpace(t.DNSNameserver); raw != "" {
		var servers []any
		for _, item := range strings.Split(raw, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			addr, err := netip.ParseAddr(item)
			if err != nil || addr.Zone() != "" {
				b.p.field("cluster_template.dns_nameserver", t.DNSNameserver, "comma-separated IP addresses of DNS servers")
				servers = nil
				break
			}
			servers = append(servers, addr.String())
		}
		if len(servers) > 0 {
			put(b.values, servers, "clusterNetworking", "internalNetwork", "dnsNameservers")
		}
	}
}

// apiServer maps the API server's load balancer. The load balancer is always
// on (the template's master_lb_enabled is not used: without it the control
// plane cannot be resized or upgraded), as in the StackHPC driver.
func (b *builder) apiServer() {
	put(b.values, true, "apiServer", "enableLoadBalancer")
	put(b.values, b.labels.boolean("master_lb_floating_ip_enabled"), "apiServer", "associateFloatingIP")
	if !b.labels.given["master_lb_floating_ip_enabled"] {
		fip := b.in.Cluster.FloatingIPEnabled
		if fip == nil {
			fip = b.in.ClusterTemplate.FloatingIPEnabled
		}
		if fip != nil && !*fip && b.labels.boolean("master_lb_floating_ip_enabled") {
			b.warn("floating_ip_enabled=false does not remove the API server's floating IP; set the label master_lb_floating_ip_enabled=false for that")
		}
	}
	if provider := b.labels.str("octavia_provider"); provider != "" {
		put(b.values, provider, "apiServer", "loadBalancerProvider")
	}
	if cidrs := b.labels.list("api_master_lb_allowed_cidrs"); len(cidrs) > 0 {
		put(b.values, stringsToAny(cidrs), "apiServer", "allowedCIDRs")
	}
	if port := b.in.ClusterTemplate.APIServerPort; port != nil {
		if *port < 1 || *port > 65535 {
			b.p.field("cluster_template.apiserver_port", fmt.Sprint(*port), "a port between 1 and 65535")
		} else {
			put(b.values, *port, "apiServer", "port")
		}
	}
}
