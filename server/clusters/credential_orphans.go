package clusters

import (
	"context"
	"sort"

	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// The application credential's id lives only in the cluster's Secret. A
// sidecar that dies after Keystone made a credential and before the Secret
// holds it leaves a credential nothing refers to. Its name
// (magnum-<cluster uuid>-<hex>) still says whose it is, so every operation
// that is about to make a credential, and delete, first lists the caller's
// credentials named for the cluster and deletes those the Secret does not
// hold. (Listing another user's credentials needs the admin role; a crash
// under one user is cleaned up by that user's next operation on the
// cluster.)

// sweepOrphans deletes the caller's credentials named for the cluster,
// except keep (the one the Secret holds), and returns the caller's
// credentials that remain, by id. It is best effort: a failure to list or
// delete is logged with the ids and does not fail the operation, whose own
// outcome it does not change.
func (s *Service) sweepOrphans(ctx context.Context, caller Caller, spec Spec, keep string) map[string]openstack.CredentialRef {
	refs, err := s.openstack.CallerCredentials(ctx, caller.identity(), spec.Cluster)
	if err != nil {
		s.log.WarnContext(ctx, "could not list the caller's application credentials to find orphans", "stack_id", spec.Cluster.StackID, "err", err)
		return nil
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID < refs[j].ID })
	remaining := map[string]openstack.CredentialRef{}
	for _, ref := range refs {
		if ref.ID == keep {
			remaining[ref.ID] = ref
			continue
		}
		if err := s.openstack.DeleteCallerCredential(ctx, caller.identity(), spec.Cluster, ref); err != nil {
			s.log.ErrorContext(ctx, "orphaned application credential left behind", "stack_id", spec.Cluster.StackID, "credential", ref.ID, "name", ref.Name, "err", err)
			remaining[ref.ID] = ref
			continue
		}
		s.log.WarnContext(ctx, "deleted an orphaned application credential (an earlier operation was interrupted before storing it)",
			"stack_id", spec.Cluster.StackID, "credential", ref.ID, "name", ref.Name)
	}
	return remaining
}
