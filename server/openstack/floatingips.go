package openstack

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
)

// FloatingIP is a Neutron floating IP as the adapter returns it.
type FloatingIP struct {
	ID, Address, ProjectID string
	// PortID is the port it is attached to, "" when it is free; PortOwner
	// is that port's device_owner (Neutron's fip-port-details, "" when the
	// cloud does not have it), such as Octavia for a load balancer's VIP.
	PortID, PortOwner string
}

// floatingIPDetails is what the adapter reads of Neutron's floating IP,
// with the port-details extension (gophercloud's type decodes itself and
// would drop it).
type floatingIPDetails struct {
	ID          string `json:"id"`
	Address     string `json:"floating_ip_address"`
	ProjectID   string `json:"project_id"`
	PortID      string `json:"port_id"`
	PortDetails *struct {
		DeviceOwner string `json:"device_owner"`
	} `json:"port_details"`
}

// FindFloatingIP finds the floating IP with address among those of the
// caller's project (Caller.ProjectID), as the caller; found is false when
// the project has none. A cloud admin's token sees every project's floating
// IPs, so the project is asked for, not assumed.
func (a *Adapter) FindFloatingIP(ctx context.Context, caller Caller, address string) (fip FloatingIP, found bool, err error) {
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return FloatingIP{}, false, err
	}
	op := "look up floating IP " + address + " in Neutron"
	neutron, err := openstack.NewNetworkV2(sess.pc, a.endpointOpts(caller))
	if err != nil {
		return FloatingIP{}, false, apiError(ctx, "network", op, sess.identity, err)
	}
	pager := floatingips.List(neutron, floatingips.ListOpts{FloatingIP: address, ProjectID: caller.ProjectID})
	page, err := pager.AllPages(ctx)
	if err != nil {
		return FloatingIP{}, false, apiError(ctx, "network", op, sess.identity, err)
	}
	var all []floatingIPDetails
	if err := floatingips.ExtractFloatingIPsInto(page, &all); err != nil {
		return FloatingIP{}, false, fmt.Errorf("openstack network: reading the floating IP list: %w", err)
	}
	for _, f := range all {
		// Neutron filters by address; checked again, as a proxy may not.
		if f.Address != address || (caller.ProjectID != "" && f.ProjectID != caller.ProjectID) {
			continue
		}
		out := FloatingIP{ID: f.ID, Address: f.Address, ProjectID: f.ProjectID, PortID: f.PortID}
		if f.PortDetails != nil {
			out.PortOwner = f.PortDetails.DeviceOwner
		}
		return out, true, nil
	}
	return FloatingIP{}, false, nil
}
