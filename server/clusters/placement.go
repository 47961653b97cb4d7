package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// PlacementLabel is the template label that chooses a management cluster by
// its configured name.
const PlacementLabel = "capi_management_cluster"

// place finds the management cluster a Magnum cluster lives on: wherever its
// release or CAPI Cluster already is (so later operations and status reads
// follow the cluster even if its template's label changes), else the one its
// template's capi_management_cluster label names, else the default.
func (s *Service) place(ctx context.Context, spec Spec) (*ManagementCluster, error) {
	if spec.Cluster.StackID != "" && len(s.mgmt) > 1 {
		ns := s.namespace(spec)
		for _, mc := range s.mgmt {
			objs, err := mc.Cache.Objects(ctx, ns, spec.Cluster.StackID)
			if err != nil {
				return nil, err
			}
			if objs.Release.Exists || objs.Cluster != nil {
				return mc, nil
			}
		}
	}
	if name, ok := spec.Template.Labels[PlacementLabel]; ok {
		mc, found := s.byName[name]
		if !found {
			return nil, &helmvalues.FieldError{
				Field: "cluster_template.labels." + PlacementLabel, Value: name,
				Expected: "the name of a configured management cluster (" + s.names() + ")",
			}
		}
		return mc, nil
	}
	return s.fallback, nil
}

func (s *Service) names() string {
	out := ""
	for i, mc := range s.mgmt {
		if i > 0 {
			out += ", "
		}
		out += mc.Name
	}
	return out
}
