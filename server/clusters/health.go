package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// Health derives Magnum's health status from the watch cache.
func (s *Service) Health(ctx context.Context, spec Spec) (capistatus.Health, error) {
	if spec.Cluster.StackID == "" {
		return capistatus.Health{Status: "UNKNOWN", Reasons: map[string]string{"api": "the cluster has no release"}}, nil
	}
	o, err := s.observe(ctx, spec)
	if err != nil {
		return capistatus.Health{}, err
	}
	h := capistatus.DeriveHealth(s.statusRequest(spec, o.objs), o.snap)
	// Magnum asks the health of complete clusters, which it no longer
	// polls the status of: the hand-off learns their facts here too.
	s.offerHandOff(o, spec.Cluster.Status)
	return s.withCredentialWatch(h, s.namespace(spec), spec.Cluster.StackID), nil
}
