package clusters

import (
	"cmp"
	"context"
)

// Change says what an update asks for beyond "re-apply the cluster as
// Magnum now describes it".
type Change struct {
	// NodeGroupUUID is the node group being resized or changed.
	NodeGroupUUID string
	// RemoveNodes are machines to remove first when NodeGroupUUID shrinks.
	RemoveNodes []string
}

// Update re-renders the cluster from Magnum's current description and
// upgrades its release: update_cluster, resize_cluster and the node group
// operations all come down to this. A change of the API server's endpoint
// is refused before anything is written (endpoint_fixed.go). Machines named in RemoveNodes are marked
// for removal first, so Cluster API deletes those and not others.
//
// Idempotent: the values are a function of Magnum's description, and
// marking a machine again changes nothing; a retry makes one more release
// revision with the same values. A credential due for renewal is renewed
// beside the rest (renewCredentialIfDue, itself idempotent).
func (s *Service) Update(ctx context.Context, caller Caller, spec Spec, change Change) error {
	op, err := s.prepare(ctx, caller, spec, nil)
	if err != nil {
		return err
	}
	return s.withLock(ctx, op, func(ctx context.Context) (err error) {
		if err := s.checkEndpointFixed(ctx, op); err != nil {
			return err
		}
		// The renewal (a read of the credential's Secret, rarely more)
		// touches nothing the rest reads or writes: it runs beside them,
		// and ends before the Lease is given back. A panic in it fails
		// the update.
		renewal := goAll(ctx, s.logger(ctx), "clusters/renewCredential", func() error {
			s.renewCredentialIfDue(ctx, caller, op)
			return nil
		})
		defer func() { err = cmp.Or(err, renewal.Wait()) }()
		if len(change.RemoveNodes) > 0 {
			if err := s.markForRemoval(ctx, op, change); err != nil {
				return err
			}
		}
		if err := s.placeServerGroups(ctx, op, false); err != nil {
			return err
		}
		if err := s.deployRelease(ctx, op, op.values.values, true); err != nil {
			return err
		}
		return s.deleteServerGroups(ctx, op, false)
	})
}
