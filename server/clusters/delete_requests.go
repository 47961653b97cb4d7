package clusters

import (
	"context"
	"sync"
	"time"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// deleteRequests remembers when this process last asked for each cluster's
// deletion. The deletion timeout runs from the latest request, so a delete
// retried after DELETE_FAILED gets the whole timeout again. The same time is
// written on the CAPI Cluster for other replicas and restarts; this copy
// covers the polls before the watch cache shows that annotation.
type deleteRequests struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (d *deleteRequests) note(stackID string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.last == nil {
		d.last = map[string]time.Time{}
	}
	d.last[stackID] = at
}

func (d *deleteRequests) get(stackID string) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last[stackID]
}

func (d *deleteRequests) forget(stackID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.last, stackID)
}

// markDeleteRequested records the request in memory and on the Cluster. The
// annotation is best effort: without it another replica measures from the
// Cluster's deletionTimestamp, as before.
func (s *Service) markDeleteRequested(ctx context.Context, op *operation) {
	now, stackID := s.now(), op.stackID()
	s.deletes.note(stackID, now)
	if err := op.mc.Kube.AnnotateCluster(ctx, op.ns, stackID, kube.DeleteRequestedAnnotation, now.UTC().Format(time.RFC3339)); err != nil {
		s.log.WarnContext(ctx, "could not record the delete request on the Cluster", "stack_id", stackID, "err", err)
	}
}

// deletionStarted is when the current deletion attempt began: the latest of
// the Cluster's deletionTimestamp, the request recorded on it, and this
// process's own record.
func (s *Service) deletionStarted(stackID string, objs *watchcache.Objects, fallback time.Time) time.Time {
	var start time.Time
	if c := objs.Cluster; c != nil && c.DeletionTimestamp != nil {
		start = c.DeletionTimestamp.Time
		if t, err := time.Parse(time.RFC3339, c.Annotations[kube.DeleteRequestedAnnotation]); err == nil && t.After(start) {
			start = t
		}
	}
	if t := s.deletes.get(stackID); t.After(start) {
		start = t
	}
	if start.IsZero() {
		return fallback
	}
	return start
}
