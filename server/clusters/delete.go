package clusters

import (
	"context"
	"errors"
)

// Delete uninstalls the release. Helm deletes the CAPI Cluster, whose
// deletion Cluster API cascades to the control plane, machines and the
// OpenStack resources. Delete first writes the cluster's cleanup marker:
// once all of that is gone the cleanup reconciler (cleanup_reconciler.go)
// deletes the driver's own Secrets and credential, and Status reports
// DELETE_COMPLETE when it has. A cluster
// whose create failed before it was named may still have written under the
// name it would have got (see namedForDelete).
//
// The cluster's credential stays until then (Cluster API needs it to delete
// the servers), but credentials of the caller's that an interrupted create
// or rotation left unstored are deleted now: nothing uses them, and after
// DELETE_COMPLETE nobody would know to look. A caller of another project
// (a cloud admin) has none of the cluster's: its credentials are not
// looked at, and the server groups are deleted as the cluster's credential.
//
// Idempotent: the marker is applied, uninstalling a release already gone
// succeeds, and the cleanup reconciler finds whatever is left.
func (s *Service) Delete(ctx context.Context, caller Caller, spec Spec) error {
	if err := namedForDelete(&spec); err != nil {
		return err
	}
	op, err := s.at(ctx, spec)
	if err != nil {
		return err
	}
	return s.withLock(ctx, op, func(ctx context.Context) error {
		if err := s.removeFromGitOps(ctx, op); err != nil {
			// The cleanup before DELETE_COMPLETE removes it again, and
			// must succeed: nothing leaks.
			s.log.WarnContext(ctx, "argo cd registration not removed yet; retried when the deletion completes", "stack_id", op.stackID(), "err", err)
		}
		if err := s.actAs(ctx, caller, op); err != nil {
			return err
		}
		if caller.inProjectOf(spec) {
			id, err := s.credentialID(ctx, op)
			if err != nil {
				// Without the Secret's id the credential the deletion still
				// needs would look orphaned too.
				s.log.WarnContext(ctx, "not sweeping orphaned credentials: the cluster's credential id is unknown", "stack_id", op.stackID(), "err", err)
			} else {
				s.sweepOrphans(ctx, caller, spec, id)
			}
		}
		// The marker first: whatever happens next, the cleanup reconciler
		// finds the cluster once Cluster API has deleted it.
		if err := s.markForCleanup(ctx, op); err != nil {
			return err
		}
		if err := s.releases.Uninstall(ctx, op.target(), op.stackID()); err != nil {
			return err
		}
		s.forgetDeployed(op.stackID())
		s.markDeleteRequested(ctx, op)
		s.cleanups.Add(clusterKey{op.mc.Name, op.ns, op.stackID()})
		s.log.InfoContext(ctx, "release uninstalled", "stack_id", op.stackID(), "namespace", op.ns)
		return s.deleteServerGroups(ctx, op, true)
	})
}

// namedForDelete gives a cluster without a stack_id the one its create
// would have returned. A create whose caller gave up (the shim's deadline
// passed, so Magnum saved no stack_id and set CREATE_FAILED) may still have
// made the credential, the Secrets and the release under that name; the
// name is a function of the cluster's name and uuid, so the delete, and
// the cleanup that finishes it, find and remove them. Where nothing was
// made there is nothing to find and the delete completes at once.
func namedForDelete(spec *Spec) error {
	spec.Cluster.StackID = stackID(*spec)
	return nil
}

// actAs sets op.actor for a deletion: as actor, except that a cluster
// without a credential of its own, asked by another project, is still
// deleted (its release is ours alone) with nobody to act in OpenStack as.
func (s *Service) actAs(ctx context.Context, caller Caller, op *operation) error {
	actor, err := s.actor(ctx, caller, op)
	var none *NoProjectIdentityError
	if err != nil && !errors.As(err, &none) {
		return err
	}
	op.actor = actor
	return nil
}
