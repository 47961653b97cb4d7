package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
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
	if uuidLike.MatchString(ref) {
		var n externalNetwork
		err := networks.Get(ctx, neutron, ref).ExtractInto(&n)
		switch {
		case err == nil && !n.External:
			return "", &ReferenceError{Field: field, Value: ref, Problem: fmt.Sprintf("network %s is not external (router:external is false)", n.ID)}
		case err == nil:
			return n.ID, nil
		case !gophercloud.ResponseCodeIs(err, http.StatusNotFound):
			return "", apiError(ctx, "network", "get network "+ref, callerToken, err)
		}
	}
	yes := true
	page, err := networks.List(neutron, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{Name: ref}, External: &yes}).AllPages(ctx)
	if err != nil {
		return "", apiError(ctx, "network", "list external networks named "+ref, callerToken, err)
	}
	var found []externalNetwork
	if err := networks.ExtractNetworksInto(page, &found); err != nil {
		return "", fmt.Errorf("openstack network: reading the network list: %w", err)
	}
	ids := make([]string, len(found))
	for i, n := range found {
		ids[i] = n.ID
	}
	return one(field, ref, "external network", ids)
}

func findNetwork(ctx context.Context, neutron *gophercloud.ServiceClient, field, ref string) (string, error) {
	if uuidLike.MatchString(ref) {
		n, err := networks.Get(ctx, neutron, ref).Extract()
		if err == nil {
			return n.ID, nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return "", apiError(ctx, "network", "get network "+ref, callerToken, err)
		}
	}
	page, err := networks.List(neutron, networks.ListOpts{Name: ref}).AllPages(ctx)
	if err != nil {
		return "", apiError(ctx, "network", "list networks named "+ref, callerToken, err)
	}
	found, err := networks.ExtractNetworks(page)
	if err != nil {
		return "", fmt.Errorf("openstack network: reading the network list: %w", err)
	}
	ids := make([]string, len(found))
	for i, n := range found {
		ids[i] = n.ID
	}
	return one(field, ref, "network", ids)
}

// findSubnet resolves a subnet; a name is looked up within the network when
// one is known, so equally named subnets of other networks do not clash.
func findSubnet(ctx context.Context, neutron *gophercloud.ServiceClient, field, ref, networkID string) (*subnets.Subnet, error) {
	if uuidLike.MatchString(ref) {
		sn, err := subnets.Get(ctx, neutron, ref).Extract()
		if err == nil {
			return sn, nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, apiError(ctx, "network", "get subnet "+ref, callerToken, err)
		}
	}
	page, err := subnets.List(neutron, subnets.ListOpts{Name: ref, NetworkID: networkID}).AllPages(ctx)
	if err != nil {
		return nil, apiError(ctx, "network", "list subnets named "+ref, callerToken, err)
	}
	found, err := subnets.ExtractSubnets(page)
	if err != nil {
		return nil, fmt.Errorf("openstack network: reading the subnet list: %w", err)
	}
	ids := make([]string, len(found))
	for i, sn := range found {
		ids[i] = sn.ID
	}
	if _, err := one(field, ref, "subnet", ids); err != nil {
		return nil, err
	}
	return &found[0], nil
}

// one is the single id of a name look-up, or the not-found / ambiguous error.
func one(field, ref, what string, ids []string) (string, error) {
	switch len(ids) {
	case 0:
		return "", notFound(field, ref, what)
	case 1:
		return ids[0], nil
	}
	return "", ambiguous(field, ref, what, ids)
}
