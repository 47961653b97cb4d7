package clusters

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
)

// The cleanup reconciler finishes deletions: once Cluster API has deleted
// a cluster whose cleanup marker (cleanup_marker.go) exists, it deletes the
// credentials and Secrets the driver made (cleanupDeleted). It is driven by
// the watch caches' deletions, by Delete, and at start by the markers
// found (reconciler.go); what it needs to know is on the marker, so any
// sidecar finishes what another began. The status path only reads.

const (
	// cleanupWorkers clean up that many clusters at once.
	cleanupWorkers = 2
	// cleanupRecheck is how soon a cluster whose Cluster API objects are
	// gone but whose garbage (machine templates, CAPI's Secrets; no watch
	// event tells of them) is not, is looked at again.
	cleanupRecheck = 10 * time.Second
	// A failed cleanup is retried after cleanupRetryMin, doubling up to
	// cleanupRetryMax, so a Keystone that is down is not hammered.
	cleanupRetryMin = time.Second
	cleanupRetryMax = 5 * time.Minute
	// cleanupTimeout bounds one attempt.
	cleanupTimeout = 2 * time.Minute
)

func newCleanupQueue() workqueue.TypedRateLimitingInterface[clusterKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[clusterKey](cleanupRetryMin, cleanupRetryMax),
		workqueue.TypedRateLimitingQueueConfig[clusterKey]{Name: "cleanup"})
}

// watchDeletions has each watch cache tell the queue of the clusters whose
// objects it sees deleted.
func (s *Service) watchDeletions() {
	for _, mc := range s.mgmt {
		if mc.Cache == nil {
			continue
		}
		mc.Cache.OnDelete(func(ns, stackID string) { s.cleanups.Add(clusterKey{mc.Name, ns, stackID}) })
	}
}

// enqueueMarked queues every cluster with a cleanup marker: the work a
// sidecar that stopped left. A failure to list is logged; the markers'
// clusters are still queued by their caches' deletions or a new Delete.
func (s *Service) enqueueMarked(ctx context.Context) {
	for _, mc := range s.mgmt {
		markers, err := mc.Kube.SecretsWithLabel(ctx, CleanupLabel)
		if err != nil {
			s.log.WarnContext(ctx, "listing the clusters to clean up", "management_cluster", mc.Name, "err", err)
			continue
		}
		for _, m := range markers {
			s.cleanups.Add(clusterKey{mc.Name, m.Namespace, m.Labels[CleanupLabel]})
		}
	}
}

// cleanupAfter is reconcileCleanup as its queue runs it.
func (s *Service) cleanupAfter(ctx context.Context, key clusterKey) (time.Duration, error) {
	recheck, err := s.reconcileCleanup(ctx, key)
	if recheck {
		return cleanupRecheck, err
	}
	return 0, err
}

// reconcileCleanup cleans up after the cluster of key if its marker says
// so and Cluster API has deleted everything; recheck asks to look again
// later. Idempotent: a cluster without a marker (and none offered,
// cleanup_unmarked.go) is done.
func (s *Service) reconcileCleanup(ctx context.Context, key clusterKey) (recheck bool, err error) {
	mc := s.byName[key.mc]
	if mc == nil {
		return false, nil
	}
	marker, err := mc.Kube.GetSecret(ctx, key.ns, cleanupMarkerName(key.stackID))
	if err != nil {
		return false, err
	}
	if marker == nil {
		if marked, err := s.markOffered(ctx, mc, key); !marked || err != nil {
			return false, err
		}
		if marker, err = mc.Kube.GetSecret(ctx, key.ns, cleanupMarkerName(key.stackID)); err != nil || marker == nil {
			return false, err
		}
	}
	op := &operation{spec: specOfMarker(marker), mc: mc, ns: key.ns}
	objs, err := mc.Cache.Objects(ctx, key.ns, key.stackID)
	if err != nil {
		return false, err
	}
	snap, err := snapshot(objs)
	if err != nil {
		return false, err
	}
	if !capistatus.Deleted(objs.Release.Exists, snap) {
		return false, nil // the cache's deletions bring it back
	}
	left, err := mc.Kube.Leftovers(ctx, key.ns, key.stackID, certs.ClusterUUIDLabel)
	if err != nil || len(left) > 0 {
		return err == nil, err
	}
	if err := s.cleanupDeleted(ctx, op); err != nil {
		if rerr := s.recordCleanupFailure(ctx, op, err); rerr != nil {
			s.log.WarnContext(ctx, "could not record a failed cleanup", "stack_id", key.stackID, "err", rerr)
		}
		return false, err
	}
	return false, nil
}
