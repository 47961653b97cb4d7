package clusters

import (
	"context"
	"errors"
	"fmt"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
)

// cleanupDeleted removes what the driver made outside the release once
// Cluster API has deleted everything: the application credential (with the
// sidecar's own identity; the cleanup has no user token), any other
// credential named for the cluster of any user of its project, every
// Secret labelled with the cluster's uuid (credentials and CAs, the
// StackHPC driver's included), the cluster's Argo CD Secret, and last the
// cleanup marker (cleanup_marker.go), so the status path reports
// DELETE_COMPLETE only when nothing is left. It is idempotent: each step
// finds what an interrupted attempt left, or nothing.
func (s *Service) cleanupDeleted(ctx context.Context, op *operation) error {
	spec := op.spec
	id, err := s.credentialID(ctx, op)
	if err != nil {
		return err
	}
	if id != "" {
		if err := s.openstack.DeleteCredential(ctx, spec.Cluster, id); err != nil {
			return fmt.Errorf("deleting application credential %s: %w", id, err)
		}
	}
	s.deleteOrphanedCredentials(ctx, spec)
	// A namespace an older sidecar (with rights everywhere) made has no
	// RoleBinding of ours yet; deleting Secrets there needs it.
	if err := op.mc.Kube.BindNamespace(ctx, op.ns); err != nil {
		return err
	}
	n, err := op.mc.Kube.DeleteSecrets(ctx, op.ns, map[string]string{certs.ClusterUUIDLabel: spec.Cluster.UUID})
	if err != nil {
		return err
	}
	if err := s.removeFromGitOps(ctx, op); err != nil {
		return fmt.Errorf("removing the cluster's Argo CD registration: %w", err)
	}
	if err := op.mc.Kube.DeleteSecret(ctx, op.ns, cleanupMarkerName(op.stackID())); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "cluster deleted; cleaned up", "stack_id", spec.Cluster.StackID, "secrets", n, "credential", id)
	return nil
}

// withCleanup keeps a deletion Cluster API has finished out of
// DELETE_COMPLETE (Magnum would then forget the cluster and what leaked
// with it) while the cleanup reconciler has work left: in progress while it
// works or its failure may pass, failed when it needs an operator.
func withCleanup(res capistatus.Result, left *cleanupFailure) capistatus.Result {
	if left == nil {
		return res
	}
	res.Status = statusDeleteInProgress
	if left.permanent {
		res.Status = statusDeleteFailed
	}
	if left.msg == cleanupPending {
		res.StatusReason = "Cluster API resources are gone; " + cleanupPending
	} else {
		// The error names what the adapters called (URLs, ids): the tenant
		// reads it rewritten, the operator's log (server/status_log.go) whole.
		res.StatusReason = "Cluster API resources are gone, but cleaning up failed: " + capistatus.TenantText(left.msg)
		res.Rewritten = append(res.Rewritten, left.msg)
	}
	for i := range res.NodeGroups {
		res.NodeGroups[i].Status = res.Status
	}
	return res
}

// deleteCleanupResult is withCleanup for a failure the status path met
// itself (reading what is left).
func deleteCleanupResult(res capistatus.Result, err error) capistatus.Result {
	var permanent interface{ FailedPrecondition() bool }
	return withCleanup(res, &cleanupFailure{msg: err.Error(), permanent: errors.As(err, &permanent) && permanent.FailedPrecondition()})
}
