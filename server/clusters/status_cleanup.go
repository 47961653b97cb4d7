package clusters

import (
	"context"
	"errors"
	"fmt"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// cleanupDeleted removes what the driver made outside the release once
// Cluster API has deleted everything: the application credential (with the
// sidecar's own identity; the periodic sync has no user token), any other
// credential named for the cluster of any user of its project, and every
// Secret labelled with the cluster's uuid (credentials and CAs, the StackHPC
// driver's included). It is idempotent: a later poll finds nothing left.
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
	n, err := op.mc.Kube.DeleteSecrets(ctx, op.ns, map[string]string{"magnum.openstack.org/cluster-uuid": spec.Cluster.UUID})
	if err != nil {
		return err
	}
	if err := s.removeFromGitOps(ctx, op); err != nil {
		return fmt.Errorf("removing the cluster's Argo CD registration: %w", err)
	}
	s.log.InfoContext(ctx, "cluster deleted; cleaned up", "stack_id", spec.Cluster.StackID, "secrets", n, "credential", id)
	return nil
}

// deleteCleanupResult keeps a cluster whose cleanup failed out of
// DELETE_COMPLETE (Magnum would then forget it and what leaked with it):
// in progress while the failure may pass, failed when it needs an operator.
func deleteCleanupResult(res capistatus.Result, err error) capistatus.Result {
	res.Status = statusDeleteInProgress
	var permanent interface{ FailedPrecondition() bool }
	if errors.As(err, &permanent) && permanent.FailedPrecondition() {
		res.Status = statusDeleteFailed
	}
	// The error names what the adapters called (URLs, ids): the tenant
	// reads it rewritten, the operator's log (server/status_log.go) whole.
	res.StatusReason = "Cluster API resources are gone, but cleaning up failed: " + capistatus.TenantText(err.Error())
	res.Rewritten = append(res.Rewritten, err.Error())
	for i := range res.NodeGroups {
		res.NodeGroups[i].Status = res.Status
	}
	return res
}
