package clusters

import (
	"context"
	"errors"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/magnum-capi/magnum-capi/server/release"
)

// target is where the cluster's release lives, with the labels every
// object of it carries.
func target(mc *ManagementCluster, ns string, spec Spec) release.Target {
	return release.Target{Getter: mc.Kube.HelmGetter(ns), Namespace: ns, Labels: clusterLabels(spec)}
}

// Change says what an update-like operation asks for beyond "re-apply the
// cluster as Magnum now describes it".
type Change struct {
	// NodeGroupUUID is the node group being resized or changed.
	NodeGroupUUID string
	// RemoveNodes are machines to remove first when NodeGroupUUID shrinks.
	RemoveNodes []string
}

// Apply re-renders the cluster from Magnum's current description and
// upgrades the release: update_cluster, resize_cluster and the node group
// operations all come down to this. Machines named in RemoveNodes are marked
// for removal first, so Cluster API deletes those and not others.
func (s *Service) Apply(ctx context.Context, caller Caller, spec Spec, change Change) error {
	if spec.Cluster.StackID == "" {
		return preconditionf("cluster %s has no stack_id: it was never created by this driver", spec.Cluster.UUID)
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return err
	}
	ns := s.namespace(spec)
	r, err := s.render(ctx, caller, spec)
	if err != nil {
		return err
	}
	ch, err := s.charts.Load(ctx, r.chartVersion)
	if err != nil {
		return err
	}
	return s.withLock(ctx, mc, ns, spec, func(ctx context.Context) error {
		if len(change.RemoveNodes) > 0 {
			if err := s.markForRemoval(ctx, mc, ns, spec, change); err != nil {
				return err
			}
		}
		return s.applyRelease(ctx, mc, ns, spec, ch, r.values, true)
	})
}

// applyRelease installs or upgrades the release with values. With carry, a
// CA-rotation marker in the deployed values is kept, so this change does not
// roll every machine again. The caller holds the cluster's Lease.
func (s *Service) applyRelease(ctx context.Context, mc *ManagementCluster, ns string, spec Spec, ch *chart.Chart, values map[string]any, carry bool) error {
	t := target(mc, ns, spec)
	stackID := spec.Cluster.StackID
	if carry {
		prev, err := s.releases.Get(ctx, t, stackID)
		var notFound *release.NotFoundError
		switch {
		case err == nil:
			carryMachineMetadata(prev.Values, values, caRotationKey)
		case !errors.As(err, &notFound):
			return err
		}
	}
	values, err := s.adoptValues(ctx, t, stackID, ch, values, carry)
	if err != nil {
		return err
	}
	rel, err := s.releases.Apply(ctx, t, stackID, ch, values)
	if err != nil {
		return err
	}
	s.rememberApplied(stackID, rel.Revision)
	return nil
}
