package openstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// networkFacts are the resolved network ids; empty when Magnum has none (the
// chart then creates or discovers them).
type networkFacts struct {
	external, fixedNetwork, fixedSubnet string
}

// resolveNetworks resolves the template's external network and the fixed
// network and subnet, the cluster's value winning over the template's.
// A subnet without a network gives the network; with one, it must belong
// to it.
func resolveNetworks(ctx context.Context, neutron *gophercloud.ServiceClient, objs Objects) (networkFacts, error) {
	var (
		nf   networkFacts
		errs []error
		err  error
	)
	if ref := objs.Template.ExternalNetworkID; ref != "" {
		if nf.external, err = findExternalNetwork(ctx, neutron, "cluster_template.external_network_id", ref); err != nil {
			errs = append(errs, err)
		}
	}
	netField, netRef := clusterOrTemplate("fixed_network", objs.Cluster.FixedNetwork, objs.Template.FixedNetwork)
	subField, subRef := clusterOrTemplate("fixed_subnet", objs.Cluster.FixedSubnet, objs.Template.FixedSubnet)
	if netRef != "" {
		if nf.fixedNetwork, err = findNetwork(ctx, neutron, netField, netRef); err != nil {
			errs = append(errs, err)
		}
	}
	if subRef != "" && (netRef == "" || nf.fixedNetwork != "") {
		sn, err := findSubnet(ctx, neutron, subField, subRef, nf.fixedNetwork)
		switch {
		case err != nil:
			errs = append(errs, err)
		case nf.fixedNetwork == "":
			nf.fixedNetwork, nf.fixedSubnet = sn.NetworkID, sn.ID
		case sn.NetworkID != nf.fixedNetwork:
			errs = append(errs, &ReferenceError{Field: subField, Value: subRef, Problem: fmt.Sprintf(
				"subnet %s belongs to network %s, not to %s %q (%s)", sn.ID, sn.NetworkID, netField, netRef, nf.fixedNetwork)})
		default:
			nf.fixedSubnet = sn.ID
		}
	}
	return nf, errors.Join(errs...)
}

// clusterOrTemplate picks the cluster's value (Magnum lets a cluster
// override the template's fixed network and subnet) and names its field.
func clusterOrTemplate(name, cluster, template string) (field, value string) {
	if cluster != "" {
		return "cluster." + name, cluster
	}
	return "cluster_template." + name, template
}

type externalNetwork struct {
	networks.Network
	external.NetworkExternalExt
}

func findExternalNetwork(ctx context.Context, neutron *gophercloud.ServiceClient, field, ref string) (string, error) {
	yes := true
	n, err := finder[externalNetwork]{
		service: "network", kind: "external network",
		get: func(ctx context.Context, id string) (n externalNetwork, err error) {
			err = networks.Get(ctx, neutron, id).ExtractInto(&n)
			return n, err
		},
		named: func(name string) pagination.Pager {
			return networks.List(neutron, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{Name: name}, External: &yes})
		},
		extract: func(p pagination.Page) (found []externalNetwork, err error) {
			err = networks.ExtractNetworksInto(p, &found)
			return found, err
		},
		id: func(n externalNetwork) string { return n.ID },
	}.find(ctx, field, ref)
	if err != nil {
		return "", err
	}
	// Only an id can name an internal network: names are looked up among
	// the external ones.
	if !n.External {
		return "", &ReferenceError{Field: field, Value: ref, Problem: fmt.Sprintf("network %s is not external (router:external is false)", n.ID)}
	}
	return n.ID, nil
}

func findNetwork(ctx context.Context, neutron *gophercloud.ServiceClient, field, ref string) (string, error) {
	n, err := finder[networks.Network]{
		service: "network", kind: "network",
		get: func(ctx context.Context, id string) (networks.Network, error) {
			return value(networks.Get(ctx, neutron, id).Extract())
		},
		named:   func(name string) pagination.Pager { return networks.List(neutron, networks.ListOpts{Name: name}) },
		extract: networks.ExtractNetworks,
		id:      func(n networks.Network) string { return n.ID },
	}.find(ctx, field, ref)
	return n.ID, err
}

// findSubnet resolves a subnet; a name is looked up within the network when
// one is known, so equally named subnets of other networks do not clash.
func findSubnet(ctx context.Context, neutron *gophercloud.ServiceClient, field, ref, networkID string) (*subnets.Subnet, error) {
	sn, err := finder[subnets.Subnet]{
		service: "network", kind: "subnet",
		get: func(ctx context.Context, id string) (subnets.Subnet, error) {
			return value(subnets.Get(ctx, neutron, id).Extract())
		},
		named: func(name string) pagination.Pager {
			return subnets.List(neutron, subnets.ListOpts{Name: name, NetworkID: networkID})
		},
		extract: subnets.ExtractSubnets,
		id:      func(sn subnets.Subnet) string { return sn.ID },
	}.find(ctx, field, ref)
	if err != nil {
		return nil, err
	}
	return &sn, nil
}
