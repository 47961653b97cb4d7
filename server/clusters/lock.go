package clusters

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/panics"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// lockWaitReserve is the part of the caller's remaining time not spent
// waiting for another operation's Lease: the operation itself needs it, and
// if the Lease is not free by then the caller should get our answer (Aborted;
// the log names the holder) rather than its own deadline expiring unexplained.
// With the shim's call_timeout of 45 s, less the 5 s the sidecar keeps for
// its answer (server's answerReserve), a call waits up to about 25 s.
const lockWaitReserve = 15 * time.Second

// lockReleaseTimeout bounds releasing the Lease after an operation; it fits
// in the part of the caller's deadline the sidecar keeps for its answer
// (server's answerReserve).
const lockReleaseTimeout = 2 * time.Second

// withLock runs fn holding the cluster's Lease in its namespace (created if
// missing: the Lease lives there). Operations on one cluster are thereby
// serialized across every sidecar replica, and within one (each operation
// holds the Lease under its own identity), while different clusters proceed
// in parallel.
//
// A second operation on a cluster waits for the first and then runs: both
// succeed, one after the other, each making its own release revision. Only
// when the Lease is not free within the caller's deadline, less
// lockWaitReserve, does it fail, as Aborted with the holder in the message,
// having changed nothing. A Lease left by a sidecar that died is taken over
// once its TTL passes.
//
// If the Lease is lost while fn runs, fn's context is cancelled with the
// reason as its cause, and the operation fails with it whatever fn
// returned: a kube.LostError (Aborted: retry) when another replica took it
// over after we stalled, a kube.RenewalError (classified as its last
// renewal's error: Unavailable for a management API not answering) when it
// could not be renewed within two thirds of its TTL.
func (s *Service) withLock(ctx context.Context, op *operation, fn func(context.Context) error) error {
	lock, err := s.acquireLock(ctx, op)
	if err != nil {
		return err
	}
	// Lost (another sidecar took the Lease over, or it could not be renewed
	// in time) cancels the operation, so that its later writes stop; its
	// context's cause says why.
	opCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		defer panics.Recover(ctx, s.logger(ctx), "clusters/lockWatch", nil)
		select {
		case <-lock.Lost():
			cancel(lock.Err(nil))
		case <-opCtx.Done():
		}
	}()
	op.history = new(release.History)
	// A panic under the Lease fails this operation alone, and the Lease is
	// given back below as after any error, not renewed for ever.
	err = panics.Run(opCtx, s.logger(ctx), "clusters/withLock", func() error { return fn(opCtx) })
	op.history = nil
	s.giveBack(ctx, op, lock)
	if lost := lock.Err(err); lost != nil {
		// Whatever the operation answered, it was not alone to the end.
		return lost
	}
	return err
}

// acquireLock takes the cluster's Lease in its namespace, making the
// namespace first (again, if someone removed it).
func (s *Service) acquireLock(ctx context.Context, op *operation) (*kube.Lock, error) {
	mc, ns, spec := op.mc, op.ns, op.spec
	ensureNamespace := func() error {
		return mc.Kube.EnsureNamespace(ctx, ns, map[string]string{
			"app.kubernetes.io/managed-by": "magnum-capi",
			certs.ProjectIDLabel:           clusterLabels(spec)[certs.ProjectIDLabel],
		})
	}
	if err := ensureNamespace(); err != nil {
		return nil, err
	}
	waitCtx, cancelWait := waitContext(ctx)
	defer cancelWait()
	acquire := func() (*kube.Lock, error) {
		return mc.Kube.AcquireLock(waitCtx, kube.LockRequest{
			Namespace: ns, Name: spec.Cluster.StackID, Holder: s.cfg.Holder + "/" + operationID(),
			TTL: s.cfg.LockTTL, Labels: clusterLabels(spec),
		}, s.log)
	}
	lock, err := acquire()
	if kube.NamespaceMissing(err) {
		// Someone removed the namespace since this sidecar made or saw
		// it (EnsureNamespace remembers): make it again.
		s.log.WarnContext(ctx, "the cluster's namespace is gone; creating it again", "namespace", ns, "stack_id", spec.Cluster.StackID)
		mc.Kube.ForgetNamespace(ns)
		if err = ensureNamespace(); err == nil {
			lock, err = acquire()
		}
	}
	return lock, err
}

// giveBack releases the Lease after the operation, or keeps it until Helm
// has finished writing a release the caller gave up on.
func (s *Service) giveBack(ctx context.Context, op *operation, lock *kube.Lock) {
	stackID := op.spec.Cluster.StackID
	if busy := s.writing.of(writingKey(op.ns, stackID)); busy != nil {
		// The caller gave up while Helm was writing the release, which it
		// finishes regardless (release_writing.go): the next operation
		// must not start, on this replica or another, until it has.
		s.log.WarnContext(ctx, "keeping the cluster lease until Helm has finished writing the release", "stack_id", stackID)
		go s.background(ctx, "clusters/releaseWhenSettled", func() { s.releaseWhenSettled(ctx, lock, stackID, busy) })
		return
	}
	// Release even when ctx is done: a Lease left behind makes the next
	// operation wait for its TTL. But not for long: on a hung API server
	// the caller must still get our answer (Unavailable) before its
	// deadline.
	releaseCtx, cancelRelease := context.WithTimeout(context.WithoutCancel(ctx), lockReleaseTimeout)
	rerr := lock.Release(releaseCtx)
	cancelRelease()
	if rerr != nil {
		s.log.WarnContext(ctx, "releasing the cluster lease; retrying in the background", "stack_id", stackID, "err", rerr)
		go s.background(ctx, "clusters/releaseLater", func() { s.releaseLater(ctx, lock, stackID) })
	}
}

// background runs fn, a goroutine that outlives the operation's answer, so
// that a panic in it is logged and counted rather than fatal.
func (s *Service) background(ctx context.Context, where string, fn func()) {
	_ = panics.Run(ctx, s.logger(ctx), where, func() error { fn(); return nil })
}

// lockLateReleaseTimeout bounds releaseLater: past it the Lease is left for
// the next operation on the cluster, which takes it over once its TTL has
// passed and deletes it.
const lockLateReleaseTimeout = 2 * time.Minute

// releaseLater retries, after the answer, a release that did not fit in the
// caller's deadline, so the Lease is not left behind (benchmarks on a loaded
// API server left one per refused create).
func (s *Service) releaseLater(ctx context.Context, lock *kube.Lock, stackID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockLateReleaseTimeout)
	defer cancel()
	if err := lock.ReleaseRetrying(ctx); err != nil {
		s.log.WarnContext(ctx, "the cluster lease is left until the next operation on the cluster takes it over",
			"stack_id", stackID, "err", err)
		return
	}
	s.log.InfoContext(ctx, "released the cluster lease after the answer", "stack_id", stackID)
}

// lockSettleTimeout bounds how long a Lease is kept for a Helm action its
// caller gave up on. The chart has no hooks or waits, so Helm only creates
// or patches objects, in seconds; past this the API server is in trouble
// and the Lease is released anyway (its TTL would free it too).
const lockSettleTimeout = 5 * time.Minute

// releaseWhenSettled keeps renewing the Lease until busy is closed, then
// releases it as releaseLater does.
func (s *Service) releaseWhenSettled(ctx context.Context, lock *kube.Lock, stackID string, busy <-chan struct{}) {
	timer := time.NewTimer(lockSettleTimeout)
	defer timer.Stop()
	select {
	case <-busy:
	case <-timer.C:
		s.log.WarnContext(ctx, "Helm is still writing the release; releasing the cluster lease all the same", "stack_id", stackID, "after", lockSettleTimeout)
	}
	s.releaseLater(ctx, lock, stackID)
}

// waitContext bounds the wait for a Lease: the caller's deadline less
// lockWaitReserve, or half the remaining time when less than twice that is
// left.
func waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	reserve := min(lockWaitReserve, time.Until(deadline)/2)
	return context.WithDeadline(ctx, deadline.Add(-reserve))
}

// operationID tells apart the operations of one sidecar in its Leases.
func operationID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clusterLabels are the labels on everything made for a cluster besides its
// Secrets (which also carry the user, as the StackHPC driver's do): the
// Lease, the release and every object the chart renders. The user is left
// out there because it changes when credentials are rotated by another
// user, and relabelling every object for that would be noise.
func clusterLabels(spec Spec) map[string]string {
	l := certs.Owner{ClusterUUID: spec.Cluster.UUID, ProjectID: spec.Cluster.ProjectID}.Labels()
	delete(l, certs.UserIDLabel)
	return l
}
