package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// rendered is one values build with the facts it was made from.
type rendered struct {
	values       map[string]any
	chartVersion string
	warnings     []string
	// serverGroupPolicy is the policy of server groups made for the cluster.
	serverGroupPolicy string
	// machineAnnotations go on node groups' MachineDeployments through the
	// release's post-renderer (release.Target): the autoscaler's capacity
	// annotations, computed from the flavors at every render.
	machineAnnotations map[string]map[string]string
	// specPatches go into the spec of the objects they name through the
	// release's post-renderer: settings the chart has no value for.
	specPatches []release.SpecPatch
	// certExpirySet: a label or the site set the certificate renewal; else
	// the cluster's default applies (certificate_renewal.go).
	certExpirySet bool
	// endpoint is the API server endpoint asked for (endpoint_fixed.go).
	endpoint helmvalues.APIEndpoint
}

// render resolves OpenStack facts as actor and builds the values. It
// writes nothing, so an invalid request fails here before anything is
// applied.
func (s *Service) render(ctx context.Context, actor openstack.Caller, spec Spec) (rendered, error) {
	facts, err := s.openstack.Facts(ctx, actor, spec.objects())
	if err != nil {
		return rendered{}, errActingAs(actor, err)
	}
	res, err := helmvalues.Build(helmvalues.Input{
		ClusterTemplate:   spec.Template,
		Cluster:           spec.Cluster,
		NodeGroups:        spec.NodeGroups,
		Image:             facts.Image,
		NodeGroupImages:   facts.NodeGroupImages,
		VolumeTypes:       facts.VolumeTypes,
		ExternalNetworkID: facts.ExternalNetworkID,
		FixedNetworkID:    facts.FixedNetworkID,
		FixedSubnetID:     facts.FixedSubnetID,
		Flavors:           facts.Flavors,
	}, s.cfg.Values)
	if err != nil {
		return rendered{}, err
	}
	for _, w := range res.Warnings {
		s.log.InfoContext(ctx, "values warning", "stack_id", spec.Cluster.StackID, "warning", w)
	}
	return rendered{values: res.Values, chartVersion: res.ChartVersion, warnings: res.Warnings, serverGroupPolicy: res.ServerGroupPolicy, machineAnnotations: res.MachineAnnotations, specPatches: specPatches(res.SpecPatches),
		certExpirySet: res.CertificatesExpiryDaysSet, endpoint: res.APIEndpoint}, nil
}

// specPatches converts the values' spec patches into the release's type.
func specPatches(in []helmvalues.SpecPatch) []release.SpecPatch {
	out := make([]release.SpecPatch, len(in))
	for i, p := range in {
		out[i] = release.SpecPatch{Group: p.Group, Version: p.Version, Kind: p.Kind, Spec: p.Spec}
	}
	return out
}
