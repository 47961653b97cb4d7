package clusters

import (
	"context"
	"fmt"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// checkFloatingIP checks, before a create writes anything, that the
// floating IP label api_server_floating_ip names is one of the cluster's
// project (looked up in Neutron as op.actor, so never another project's)
// and free: CAPO would otherwise fail to attach it long after Magnum
// reported the create as accepted. One already attached is accepted when it
// serves this cluster's API load balancer, so a retried create passes.
func (s *Service) checkFloatingIP(ctx context.Context, op *operation) error {
	address := op.values.endpoint.FloatingIP
	if address == "" {
		return nil
	}
	fip, found, err := s.openstack.FindFloatingIP(ctx, op.actor, address)
	if err != nil {
		return errActingAs(op.actor, err)
	}
	if found && fip.PortID != "" && s.floatingIPServesCluster(ctx, op, address) {
		return nil
	}
	return floatingIPProblem(op.spec.Cluster.ProjectID, address, fip, found)
}

// floatingIPServesCluster says whether the cluster already has address for
// its API server: CAPO made it the OpenStackCluster's endpoint, or an
// earlier attempt of this create deployed the release with it (CAPO then
// attaches it to this cluster's load balancer, possibly before the
// endpoint is recorded).
func (s *Service) floatingIPServesCluster(ctx context.Context, op *operation, address string) bool {
	objs, err := op.mc.Cache.Objects(ctx, op.ns, op.stackID())
	if err == nil && objs != nil && objs.InfraCluster != nil {
		if ep := objs.InfraCluster.Spec.ControlPlaneEndpoint; ep != nil && ep.Host == address {
			return true
		}
	}
	deployed, err := s.releases.Get(ctx, op.target(), op.stackID())
	return err == nil && helmvalues.DeployedAPIEndpoint(deployed.Values, nil).FloatingIP == address
}

// floatingIPProblem is what is wrong with the floating IP the label names
// (nil when nothing is): not in the project, or attached to a port.
func floatingIPProblem(projectID, address string, fip openstack.FloatingIP, found bool) error {
	switch {
	case !found:
		return &FloatingIPError{Address: address, Problem: fmt.Sprintf(
			"Neutron has no floating IP with this address in the cluster's project %s: allocate one there first "+
				"(openstack floating ip create --floating-ip-address %s <external network>)", projectID, address)}
	case fip.PortID == "":
		return nil
	case fip.PortOwner != "":
		return &FloatingIPError{Address: address, Problem: fmt.Sprintf(
			"floating IP %s is attached to port %s (%s): detach it first, or choose a free one", fip.ID, fip.PortID, fip.PortOwner)}
	default:
		return &FloatingIPError{Address: address, Problem: fmt.Sprintf(
			"floating IP %s is attached to port %s: detach it first, or choose a free one", fip.ID, fip.PortID)}
	}
}

// FloatingIPError: the floating IP label api_server_floating_ip names
// cannot be the cluster's API server address.
type FloatingIPError struct {
	Address, Problem string
}

func (e *FloatingIPError) Error() string {
	return fmt.Sprintf("labels.api_server_floating_ip: invalid value %q: expected a free floating IP of the cluster's project; %s", e.Address, e.Problem)
}

// InvalidArgument: the label is the caller's to fix.
func (e *FloatingIPError) InvalidArgument() bool { return true }
