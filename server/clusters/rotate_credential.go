package clusters

import (
	"context"
	"fmt"
)

// RotateCredential replaces the cluster's application credential: a new one
// is made as the caller, who must be of the cluster's project
// (caller_project.go), the Secret is rewritten (CAPO and the cloud
// provider pick it up), then the old one is deleted: with the caller's
// token when it is the caller's, else with the sidecar's service identity.
//
// Idempotent: retried after a crash at any point, it converges: the sweep
// removes a new credential that never reached the Secret, or an old one the
// Secret no longer holds.
func (s *Service) RotateCredential(ctx context.Context, caller Caller, spec Spec) error {
	if !caller.inProjectOf(spec) {
		return foreignRotationError()
	}
	op, err := s.locate(ctx, spec)
	if err != nil {
		return err
	}
	return s.withLock(ctx, op, func(ctx context.Context) error { return s.rotateCredential(ctx, caller, op) })
}

// rotateCredential is RotateCredential's work, under the cluster's Lease
// (also renewCredentialIfDue's).
func (s *Service) rotateCredential(ctx context.Context, caller Caller, op *operation) error {
	spec := op.spec
	oldID, err := s.credentialID(ctx, op)
	if err != nil {
		return err
	}
	mine := s.sweepOrphans(ctx, caller, spec, oldID)
	cred, err := s.storeNewCredential(ctx, caller, op)
	if err != nil {
		return err
	}
	if oldID != "" && oldID != cred.ID {
		var derr error
		if ref, ok := mine[oldID]; ok {
			derr = s.openstack.DeleteCallerCredential(ctx, caller.identity(), spec.Cluster, ref)
		} else {
			derr = s.openstack.DeleteCredential(ctx, spec.Cluster, oldID)
		}
		if derr != nil {
			return fmt.Errorf("the new application credential %s is in use, but deleting the old one (%s) failed: %w", cred.ID, oldID, derr)
		}
	}
	s.credentials.forget(op.ns, op.stackID())
	s.log.InfoContext(ctx, "application credential rotated", "stack_id", spec.Cluster.StackID, "old", oldID, "new", cred.ID)
	return nil
}
