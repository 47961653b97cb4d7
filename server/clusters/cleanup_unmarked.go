package clusters

import (
	"context"
	"sync"
)

// A deletion an earlier sidecar started wrote no cleanup marker: that
// sidecar cleaned up in its status polls. When Cluster API has deleted such
// a cluster and the driver's Secrets are left, the status poll (which
// writes nothing) offers the cluster's facts to the cleanup reconciler, in
// memory; the reconciler writes the marker from them and cleans up as
// after any delete. Magnum keeps asking while the cluster is
// DELETE_IN_PROGRESS, so a restart loses nothing.
type unmarkedDeletions struct {
	mu sync.Mutex
	m  map[clusterKey]Spec
}

// offerCleanup hands the reconciler op's cluster, which Magnum is deleting
// and no marker names.
func (s *Service) offerCleanup(op *operation) {
	key := clusterKey{op.mc.Name, op.ns, op.stackID()}
	s.unmarked.mu.Lock()
	if s.unmarked.m == nil {
		s.unmarked.m = map[clusterKey]Spec{}
	}
	s.unmarked.m[key] = op.spec
	s.unmarked.mu.Unlock()
	s.cleanups.Add(key)
}

// markOffered writes the marker of an offered cluster; false when none was
// offered.
func (s *Service) markOffered(ctx context.Context, mc *ManagementCluster, key clusterKey) (bool, error) {
	s.unmarked.mu.Lock()
	spec, ok := s.unmarked.m[key]
	s.unmarked.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := s.markForCleanup(ctx, &operation{spec: spec, mc: mc, ns: key.ns}); err != nil {
		return false, err
	}
	s.unmarked.mu.Lock()
	delete(s.unmarked.m, key)
	s.unmarked.mu.Unlock()
	s.log.InfoContext(ctx, "cleaning up after a deletion an earlier sidecar started", "stack_id", key.stackID, "namespace", key.ns)
	return true, nil
}
