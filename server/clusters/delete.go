package clusters

import "context"

// Delete uninstalls the release. Helm deletes the CAPI Cluster, whose
// deletion Cluster API cascades to the control plane, machines and the
// OpenStack resources; Status reports DELETE_COMPLETE, and cleans up the
// driver's own Secrets and credential, once all of that is gone. A cluster
// whose create failed before it was named has nothing to delete.
func (s *Service) Delete(ctx context.Context, caller Caller, spec Spec) error {
	if spec.Cluster.StackID == "" {
		return nil
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return err
	}
	ns := s.namespace(spec)
	return s.withLock(ctx, mc, ns, spec.Cluster.StackID, func(ctx context.Context) error {
		if err := s.releases.Uninstall(ctx, target(mc, ns), spec.Cluster.StackID); err != nil {
			return err
		}
		s.forgetApplied(spec.Cluster.StackID)
		s.log.InfoContext(ctx, "release uninstalled", "stack_id", spec.Cluster.StackID, "namespace", ns)
		return nil
	})
}
