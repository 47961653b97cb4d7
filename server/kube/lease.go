package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeasePrefix starts the name of every per-cluster Lease.
const LeasePrefix = "magnum-capi-"

// LockedError says another holder has the cluster's Lease and did not
// release it before the caller's deadline.
type LockedError struct {
	Lease, Holder string
	Since         time.Time
	Err           error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another operation on this cluster is in progress (lease %s held by %s since %s): %v",
		e.Lease, e.Holder, e.Since.UTC().Format(time.RFC3339), e.Err)
}

func (e *LockedError) Unwrap() error { return e.Err }

// UserMessage is what Magnum's user reads: the Lease and its holder (the
// sidecar's host and pid) are for the operator's log.
func (e *LockedError) UserMessage() string {
	return "another operation on this cluster is in progress; retry when it has finished"
}

// Aborted classifies the error for the gRPC boundary: retry later.
func (e *LockedError) Aborted() bool { return true }

// LockRequest names a per-cluster Lease and who wants it.
type LockRequest struct {
	// Namespace and Name: the Lease is LeasePrefix+Name in Namespace.
	Namespace, Name string
	// Holder identifies the operation. It must be unique per acquisition:
	// a holder can always take its own Lease again (that is how it renews),
	// so two operations sharing a holder would not exclude each other.
	Holder string
	// TTL is how long the Lease outlives a holder that stopped renewing it.
	TTL time.Duration
	// Labels are set on the Lease (the cluster's uuid and project), so it
	// is found with everything else made for the cluster.
	Labels map[string]string
}

// Lock is a held per-cluster Lease. It is renewed in the background until
// Release; if renewal fails (another holder took it over after we stalled),
// Lost is closed and the operation should stop.
type Lock struct {
	c    *Cluster
	key  client.ObjectKey
	req  LockRequest
	stop context.CancelFunc
	done chan struct{}
	lost chan struct{}
	log  *slog.Logger
	// written is the Lease as our last write left it (acquisition or
	// renewal): Release deletes that version without reading it first.
	// Only the renewal loop writes it, and Release reads it once the loop
	// has ended.
	written leaseVersion
}

// leaseVersion is what a delete's preconditions need of a Lease.
type leaseVersion struct {
	uid             types.UID
	resourceVersion string
}

// AcquireLock takes the Lease for req.Holder, waiting while someone else
// holds an unexpired one, until ctx ends. A Lease whose holder stopped
// renewing (it crashed) is taken over after its TTL.
func (c *Cluster) AcquireLock(ctx context.Context, req LockRequest, log *slog.Logger) (*Lock, error) {
	if req.Holder == "" || req.TTL < 3*time.Second {
		return nil, fmt.Errorf("lease %s/%s%s: a holder and a TTL of at least 3s are required", req.Namespace, LeasePrefix, req.Name)
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: LeasePrefix + req.Name}
	wait := 100 * time.Millisecond
	var held leaseState // the holder last seen
	for {
		current, written, err := c.tryAcquire(ctx, key, req, true)
		if err == nil {
			return c.startRenewing(key, req, written, log), nil
		}
		if errors.Is(err, errHeld) {
			held = current
		} else if ctx.Err() == nil || held.holder == "" {
			return nil, err
		}
		// The wait ended during a read, or during the pause between two:
		// either way the Lease was held the whole time, not the API down.
		if ctx.Err() != nil {
			return nil, &LockedError{Lease: key.Name, Holder: held.holder, Since: held.since, Err: ctx.Err()}
		}
		select {
		case <-ctx.Done():
			return nil, &LockedError{Lease: key.Name, Holder: held.holder, Since: held.since, Err: ctx.Err()}
		case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)))):
		}
		if wait < time.Second {
			wait *= 2
		}
	}
}

type leaseState struct {
	holder string
	since  time.Time
}

// errHeld: someone else holds an unexpired lease.
var errHeld = errors.New("lease held by another holder")

// tryAcquire takes or renews the Lease and says how it left it. With
// createFirst (an acquisition: a released Lease is deleted, so usually
// there is none) it tries to create it before reading it, one round trip
// instead of two; a renewal reads it first.
func (c *Cluster) tryAcquire(ctx context.Context, key client.ObjectKey, req LockRequest, createFirst bool) (leaseState, leaseVersion, error) {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(req.TTL / time.Second)
	holder := req.Holder
	create := func() (leaseState, leaseVersion, error) {
		lease := coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: req.Labels},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now,
			},
		}
		if err := c.leaseClient().Create(ctx, &lease); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return leaseState{}, leaseVersion{}, errHeld
			}
			return leaseState{}, leaseVersion{}, fmt.Errorf("creating lease %s: %w", key, err)
		}
		return leaseState{}, versionOf(&lease), nil
	}
	if createFirst {
		state, written, err := create()
		if !errors.Is(err, errHeld) {
			return state, written, err
		}
		// There is one: read it, below, to see whose and whether expired.
	}
	var lease coordinationv1.Lease
	err := c.leaseClient().Get(ctx, key, &lease)
	if apierrors.IsNotFound(err) {
		return create()
	}
	if err != nil {
		return leaseState{}, leaseVersion{}, fmt.Errorf("reading lease %s: %w", key, err)
	}
	state := leaseState{}
	if lease.Spec.HolderIdentity != nil {
		state.holder = *lease.Spec.HolderIdentity
	}
	if lease.Spec.AcquireTime != nil {
		state.since = lease.Spec.AcquireTime.Time
	}
	if state.holder != "" && state.holder != holder && !expired(&lease) {
		return state, leaseVersion{}, errHeld
	}
	transitions := int32(0)
	if lease.Spec.LeaseTransitions != nil {
		transitions = *lease.Spec.LeaseTransitions
	}
	acquired := &now
	if state.holder != holder {
		transitions++
	} else if lease.Spec.AcquireTime != nil {
		// A renewal: the Lease was acquired when it was, which is what a
		// waiting operation's error reports.
		acquired = lease.Spec.AcquireTime
	}
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: acquired, RenewTime: &now, LeaseTransitions: &transitions,
	}
	if len(req.Labels) > 0 {
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		maps.Copy(lease.Labels, req.Labels)
	}
	// The update carries the resourceVersion we read: if another holder
	// raced us to it, the API server refuses and we keep waiting.
	if err := c.leaseClient().Update(ctx, &lease); err != nil {
		if apierrors.IsConflict(err) {
			return state, leaseVersion{}, errHeld
		}
		return state, leaseVersion{}, fmt.Errorf("taking over lease %s: %w", key, err)
	}
	return state, versionOf(&lease), nil
}

// versionOf is the version of a Lease the API server has just written.
func versionOf(l *coordinationv1.Lease) leaseVersion {
	return leaseVersion{uid: l.UID, resourceVersion: l.ResourceVersion}
}

func expired(l *coordinationv1.Lease) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}

func (c *Cluster) startRenewing(key client.ObjectKey, req LockRequest, written leaseVersion, log *slog.Logger) *Lock {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Lock{c: c, key: key, req: req, stop: cancel, done: make(chan struct{}), lost: make(chan struct{}), log: log, written: written}
	go l.renew(ctx)
	return l
}

func (l *Lock) renew(ctx context.Context) {
	defer close(l.done)
	ticker := time.NewTicker(l.req.TTL / 3)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		// The renewal runs to its answer even when Release stops the loop
		// meanwhile: a request cancelled after it was sent may still be
		// applied, and Release must read the Lease after it. Past the TTL
		// a renewal is pointless.
		reqCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.req.TTL)
		_, written, err := l.c.tryAcquire(reqCtx, l.key, l.req, false)
		cancel()
		// A failed renewal says no version (tryAcquire's zero value):
		// whether its write was applied is unknown, so Release reads the
		// Lease rather than trust an older version.
		l.written = written
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errHeld) {
				l.log.Warn("lost the cluster lease to another sidecar", "lease", l.key.String(), "holder", l.req.Holder)
				close(l.lost)
				return
			}
			l.log.Warn("renewing the cluster lease", "lease", l.key.String(), "err", err)
		}
	}
}

// Holder is the identity the Lease is held under.
func (l *Lock) Holder() string { return l.req.Holder }

// Lost is closed if another holder took the Lease over.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Release stops renewing and deletes the Lease if we still hold it, so the
// next operation on the cluster need not wait for it to expire. It first
// deletes the version our last write left, without reading it: refused
// because the Lease changed since, it reads the Lease and decides. A write
// of ours can still reach the API server after we read the Lease (a renewal
// whose caller gave up waiting for the answer), so a delete refused for a
// stale resourceVersion reads the Lease again rather than leaving it behind.
// ctx bounds it all, including a renewal in flight on a hung API server: a
// Lease that could not be released expires after its TTL.
func (l *Lock) Release(ctx context.Context) error {
	l.stop()
	select {
	case <-l.done:
	case <-ctx.Done():
		return fmt.Errorf("releasing lease %s: waiting for a renewal in flight: %w", l.key, ctx.Err())
	}
	if w := l.written; w.resourceVersion != "" {
		lease := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.key.Namespace, Name: l.key.Name}}
		err := l.c.leaseClient().Delete(ctx, &lease, client.Preconditions{UID: &w.uid, ResourceVersion: &w.resourceVersion})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("releasing lease %s: %w", l.key, err)
		}
	}
	var err error
	for range releaseAttempts {
		var lease coordinationv1.Lease
		if err = l.c.leaseClient().Get(ctx, l.key, &lease); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("releasing lease %s: %w", l.key, err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != l.req.Holder {
			return nil
		}
		err = l.c.leaseClient().Delete(ctx, &lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("releasing lease %s: %w", l.key, err)
		}
	}
	return fmt.Errorf("releasing lease %s: changed under every attempt: %w", l.key, err)
}

// ReleaseRetrying is Release tried again every second until it succeeds or
// ctx ends. It is for a Lease whose release within the caller's deadline
// failed (a loaded or restarting API server): left alone, the next
// operation on the cluster would wait out its TTL, and a cluster never
// operated on again would keep it.
func (l *Lock) ReleaseRetrying(ctx context.Context) error {
	for {
		err := l.Release(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// releaseAttempts bounds Release's read-and-delete retries.
const releaseAttempts = 5
