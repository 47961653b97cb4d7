package helmvalues

import "fmt"

// APIEndpoint is what of the API server's endpoint is fixed once the
// cluster exists: CAPO refuses a change of the OpenStackCluster's API
// server addresses, and a new load balancer flavor or zone would mean a new
// load balancer, a new address, and every kubeconfig broken. Empty is unset.
type APIEndpoint struct {
	FloatingIP, FixedIP, LBFlavor, LBAvailabilityZone string
}

// apiEndpoint is the endpoint the values ask for; it runs after
// apiServerEndpoint.
func (b *builder) apiEndpoint() APIEndpoint {
	return APIEndpoint{
		FloatingIP:         valueString(b.values, "apiServer", "floatingIP"),
		FixedIP:            valueString(b.values, "apiServer", "fixedIP"),
		LBFlavor:           b.labels.str("api_server_lb_flavor"),
		LBAvailabilityZone: b.labels.str("api_server_lb_availability_zone"),
	}
}

// DeployedAPIEndpoint is the endpoint a deployed release has: its values,
// and the spec of the OpenStackCluster it rendered (the post-renderer's
// load balancer flavor and zone; nil when it rendered none).
func DeployedAPIEndpoint(values, openStackClusterSpec map[string]any) APIEndpoint {
	return APIEndpoint{
		FloatingIP:         valueString(values, "apiServer", "floatingIP"),
		FixedIP:            valueString(values, "apiServer", "fixedIP"),
		LBFlavor:           valueString(openStackClusterSpec, "apiServerLoadBalancer", "flavor"),
		LBAvailabilityZone: valueString(openStackClusterSpec, "apiServerLoadBalancer", "availabilityZone"),
	}
}

// EndpointChange is one label of the endpoint that differs from the
// deployed cluster's.
type EndpointChange struct {
	Label, Deployed, Requested string
}

func (c EndpointChange) String() string {
	return fmt.Sprintf("label %s: the cluster was created with %s, and this asks for %s",
		c.Label, quotedOrUnset(c.Deployed), quotedOrUnset(c.Requested))
}

func quotedOrUnset(v string) string {
	if v == "" {
		return "it unset"
	}
	return fmt.Sprintf("%q", v)
}

// Changes lists the labels whose value requested changes, in the registry's
// order.
func (e APIEndpoint) Changes(requested APIEndpoint) []EndpointChange {
	var out []EndpointChange
	for _, f := range []struct{ label, deployed, requested string }{
		{"api_server_floating_ip", e.FloatingIP, requested.FloatingIP},
		{"api_server_fixed_ip", e.FixedIP, requested.FixedIP},
		{"api_server_lb_flavor", e.LBFlavor, requested.LBFlavor},
		{"api_server_lb_availability_zone", e.LBAvailabilityZone, requested.LBAvailabilityZone},
	} {
		if f.deployed != f.requested {
			out = append(out, EndpointChange{Label: f.label, Deployed: f.deployed, Requested: f.requested})
		}
	}
	return out
}

// valueString is the string at path in tree, "" when there is none.
func valueString(tree map[string]any, path ...string) string {
	v, _ := lookup(tree, path...)
	s, _ := v.(string)
	return s
}
