package clusters

import (
	"context"
	"fmt"
	"strings"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// PlacementLabel is the template label that chooses a management cluster by
// its configured name.
const PlacementLabel = "capi_management_cluster"

// place finds the management cluster a Magnum cluster lives on. A cluster
// that exists somewhere stays there, whatever its template's label says
// now: every later operation and status read goes where it was created.
// Only a cluster found nowhere is placed by its template's
// capi_management_cluster label, else on the default.
//
// "Exists" is asked of the watch caches first (its release or CAPI
// Cluster), then, when no cache has either, of the API servers: the
// driver's Secrets, labelled with the cluster's uuid, are written before
// its release is installed, and the cloud credentials Secret is deleted
// only by the cleanup after Cluster API has deleted everything, so they
// mark the cluster's home both before the caches see a new release and
// while a deletion finishes. (Not the CA Secrets alone: the control plane
// adopts them, and they go with it.) An API server that cannot be asked is an
// error: guessing could create a second cluster, or report a deletion
// complete by looking in the wrong place.
func (s *Service) place(ctx context.Context, spec Spec) (*ManagementCluster, error) {
	if spec.Cluster.StackID != "" && len(s.mgmt) > 1 {
		mc, err := s.existing(ctx, spec)
		if err != nil || mc != nil {
			return mc, err
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

// existing is the management cluster that has the cluster already; nil
// when none has.
func (s *Service) existing(ctx context.Context, spec Spec) (*ManagementCluster, error) {
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
	uuid := map[string]string{certs.ClusterUUIDLabel: clusterLabels(spec)[certs.ClusterUUIDLabel]}
	for _, mc := range s.mgmt {
		found, err := mc.Kube.HasSecrets(ctx, ns, uuid)
		if err != nil {
			return nil, fmt.Errorf("finding the management cluster of %s: %w", spec.Cluster.StackID, err)
		}
		if found {
			return mc, nil
		}
	}
	return nil, nil
}

func (s *Service) names() string {
	names := make([]string, 0, len(s.mgmt))
	for _, mc := range s.mgmt {
		names = append(names, mc.Name)
	}
	return strings.Join(names, ", ")
}
