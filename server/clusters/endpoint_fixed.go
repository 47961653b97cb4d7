package clusters

import (
	"context"
	"strings"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// checkEndpointFixed refuses a change of the API server's endpoint (its
// floating IP, its VIP, its load balancer's flavor and zone) relative to
// what the cluster was deployed with: CAPO refuses a change of the
// OpenStackCluster's API server addresses, and another load balancer
// flavor or zone would rebuild the load balancer under every kubeconfig.
// The deployed endpoint is the release's: its values and the
// OpenStackCluster it rendered. A cluster without a release has nothing to
// keep. The caller holds the cluster's Lease and has written nothing yet.
func (s *Service) checkEndpointFixed(ctx context.Context, op *operation) error {
	deployed, err := s.deployedRelease(ctx, op)
	if err != nil || deployed == nil {
		return err
	}
	spec, err := deployed.ObjectSpec("infrastructure.cluster.x-k8s.io", "OpenStackCluster")
	if err != nil {
		return err
	}
	changes := helmvalues.DeployedAPIEndpoint(deployed.Values, spec).Changes(op.values.endpoint)
	if len(changes) == 0 {
		return nil
	}
	return &EndpointChangeError{Changes: changes}
}

// EndpointChangeError: the request changes the API server's endpoint,
// which is fixed when the cluster is created.
type EndpointChangeError struct {
	Changes []helmvalues.EndpointChange
}

func (e *EndpointChangeError) Error() string {
	parts := make([]string, len(e.Changes))
	for i, c := range e.Changes {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ") + ". The API server's endpoint (labels api_server_floating_ip, api_server_fixed_ip, " +
		"api_server_lb_flavor, api_server_lb_availability_zone) is fixed when the cluster is created: " +
		"use a template with the cluster's values, or create a new cluster"
}

// InvalidArgument: the template or labels ask for what cannot be done.
func (e *EndpointChangeError) InvalidArgument() bool { return true }
