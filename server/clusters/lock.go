package clusters

import (
	"context"
	"fmt"
)

// withLock runs fn holding the cluster's Lease in its namespace (created if
// missing: the Lease lives there). Operations on one cluster are thereby
// serialized across every sidecar replica, while different clusters proceed
// in parallel. If another replica takes the Lease over (we stalled past its
// TTL), fn's context is cancelled.
func (s *Service) withLock(ctx context.Context, mc *ManagementCluster, ns, stackID string, fn func(context.Context) error) error {
	if err := mc.Kube.EnsureNamespace(ctx, ns, map[string]string{"app.kubernetes.io/managed-by": "magnum-capi"}); err != nil {
		return err
	}
	lock, err := mc.Kube.AcquireLock(ctx, ns, stackID, s.cfg.Holder, s.cfg.LockTTL, s.log)
	if err != nil {
		return err
	}
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-lock.Lost():
			cancel()
		case <-opCtx.Done():
		}
	}()
	err = fn(opCtx)
	// Release even when ctx is done: a Lease left behind makes the next
	// operation wait for its TTL.
	if rerr := lock.Release(context.WithoutCancel(ctx)); rerr != nil {
		s.log.WarnContext(ctx, "releasing the cluster lease", "stack_id", stackID, "err", rerr)
	}
	select {
	case <-lock.Lost():
		if err == nil {
			err = fmt.Errorf("lost the lease on cluster %s to another sidecar during the operation", stackID)
		}
	default:
	}
	return err
}
