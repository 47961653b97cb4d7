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

// deleteOrphanedCredentials deletes, with the service identity, every
// credential named for the cluster that is left once the cluster is gone,
// whoever's it is: the caller-only sweep above cannot see another user's
// (a rotation by one user after a create by another, whose old credential
// could not be deleted). Each is reported in the log. Best effort: a
// service identity that may not list the project's users (Keystone's admin
// role) or a Keystone that fails leaves them, logged with what to delete.
func (s *Service) deleteOrphanedCredentials(ctx context.Context, spec Spec) {
	refs, err := s.openstack.ClusterCredentials(ctx, spec.Cluster)
	if err != nil {
		s.log.WarnContext(ctx, "could not look for the cluster's orphaned application credentials of other users; any left are named magnum-<cluster uuid>-...",
			"stack_id", spec.Cluster.StackID, "cluster", spec.Cluster.UUID, "err", err)
		return
	}
	for _, ref := range refs {
		owned := spec.Cluster
		owned.UserID = ref.UserID
		if err := s.openstack.DeleteCredential(ctx, owned, ref.ID); err != nil {
			s.log.ErrorContext(ctx, "orphaned application credential left behind; delete it by hand", "stack_id", spec.Cluster.StackID,
				"credential", ref.ID, "name", ref.Name, "user", ref.UserID, "err", err)
			continue
		}
		s.log.WarnContext(ctx, "deleted an orphaned application credential of the deleted cluster", "stack_id", spec.Cluster.StackID,
			"credential", ref.ID, "name", ref.Name, "user", ref.UserID)
	}
}
