package clusters

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// The reconcilers (the cleanup after delete, the Argo CD hand-off) do the
// writes no status poll makes. Each is a client-go rate-limited work queue
// of clusters fed by the watch caches' events; what each needs to know is
// in the management cluster, so a restart, or another sidecar, converges.

// clusterKey names one cluster on one management cluster.
type clusterKey struct{ mc, ns, stackID string }

// reconcileFunc does one cluster's work; after > 0 asks to look again then.
type reconcileFunc func(ctx context.Context, key clusterKey) (after time.Duration, err error)

// reconciler is one queue and what its workers do.
type reconciler struct {
	name    string
	queue   workqueue.TypedRateLimitingInterface[clusterKey]
	workers int
	// timeout bounds one attempt: an API server or Keystone that hangs
	// holds a worker no longer.
	timeout   time.Duration
	reconcile reconcileFunc
}

// run runs r's workers until ctx ends; it returns at once.
func (s *Service) run(ctx context.Context, r reconciler) {
	go func() {
		_ = panics.Run(ctx, s.log, "clusters/"+r.name+"-stop", func() error { <-ctx.Done(); r.queue.ShutDown(); return nil })
	}()
	for range r.workers {
		go func() {
			_ = panics.Run(ctx, s.log, "clusters/"+r.name+"-worker", func() error {
				for s.next(ctx, r) {
				}
				return nil
			})
		}()
	}
}

// next handles one queued cluster; false once the queue shut down. A
// failure is retried with the queue's back-off; a panic fails only that
// cluster's attempt.
func (s *Service) next(ctx context.Context, r reconciler) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	var after time.Duration
	err := panics.Run(ctx, s.log, "clusters/"+r.name, func() (err error) {
		ctx, cancel := context.WithTimeout(ctx, r.timeout)
		defer cancel()
		after, err = r.reconcile(ctx, key)
		return err
	})
	if err != nil {
		s.log.WarnContext(ctx, r.name+" failed; retrying", "stack_id", key.stackID, "namespace", key.ns, "err", err)
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	if after > 0 {
		r.queue.AddAfter(key, after)
	}
	return true
}

// RunReconcilers runs the cleanup reconciler and, when the hand-off is on,
// the Argo CD one until ctx ends; it returns at once.
func (s *Service) RunReconcilers(ctx context.Context) {
	s.run(ctx, reconciler{name: "cleanup", queue: s.cleanups, workers: cleanupWorkers, timeout: cleanupTimeout, reconcile: s.cleanupAfter})
	go func() {
		_ = panics.Run(ctx, s.log, "clusters/cleanup-markers", func() error { s.enqueueMarked(ctx); return nil })
	}()
	if s.gitops != nil {
		s.run(ctx, reconciler{name: "argo cd hand-off", queue: s.gitops.queue, workers: gitopsWorkers, timeout: gitopsTimeout, reconcile: s.reconcileGitOps})
	}
}
