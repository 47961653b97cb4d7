package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
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
// Release; if it is lost (another holder took it over after we stalled, or
// no renewal succeeded within renewDeadline), Lost is closed, Err says why,
// and the operation should stop.
type Lock struct {
	c    *Cluster
	key  client.ObjectKey
	req  LockRequest
	stop context.CancelFunc
	done chan struct{}
	lost chan struct{}
	log  *slog.Logger
	// lease is the Lease as our last write left it, or as we last read it
	// naming us; renewedAt is when (our clock) the last successful renewal
	// was sent. Only the renewal loop writes them while it runs.
	lease     *coordinationv1.Lease
	renewedAt time.Time
	// written is the version of lease when our last write is known to have
	// left it so: Release deletes that version without reading it first.
	// Only the renewal loop writes it, and Release reads it once the loop
	// has ended.
	written  leaseVersion
	loseOnce sync.Once
	lostErr  error
}

// leaseVersion is what a delete's preconditions need of a Lease.
type leaseVersion struct {
	uid             types.UID
	resourceVersion string
}

// AcquireLock takes the Lease for req.Holder, waiting while someone else
// holds an unexpired one, until ctx ends. A Lease whose holder stopped
// renewing (it crashed) is taken over once its resourceVersion has not
// changed for its TTL on this sidecar's clock (lease_fencing.go): clocks
// of different hosts need not agree.
func (c *Cluster) AcquireLock(ctx context.Context, req LockRequest, log *slog.Logger) (*Lock, error) {
	if req.Holder == "" || req.TTL < 3*time.Second {
		return nil, fmt.Errorf("lease %s/%s%s: a holder and a TTL of at least 3s are required", req.Namespace, LeasePrefix, req.Name)
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: LeasePrefix + req.Name}
	var held leaseState // the holder last seen
	var lease *coordinationv1.Lease
	err := acquireBackoff.DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		current, l, err := c.tryAcquire(ctx, key, req)
		switch {
		case err == nil:
			lease = l
			return true, nil
		case errors.Is(err, errHeld):
			held = current
			return false, nil
		case ctx.Err() != nil && held.holder != "":
			// The wait ended during a read: the Lease was held the whole
			// time, not the API down.
			return false, ctx.Err()
		}
		return false, err
	})
	switch {
	case err == nil:
		c.observed.forget(key)
		return c.startRenewing(key, req, lease, log), nil
	case ctx.Err() != nil && held.holder != "":
		return nil, &LockedError{Lease: key.Name, Holder: held.holder, Since: held.since, Err: ctx.Err()}
	}
	return nil, err
}

// acquireBackoff paces the attempts to take a held Lease: 100 ms doubling
// to 1 s, each pause stretched by up to its own length at random so that
// contenders spread out.
var acquireBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 1, Steps: 5, Cap: time.Second}

type leaseState struct {
	holder string
	since  time.Time
}

// errHeld: someone else holds an unexpired lease.
var errHeld = errors.New("lease held by another holder")

// tryAcquire takes the Lease and returns it as written. A released Lease
// is deleted, so usually there is none: it tries to create it before
// reading it, one round trip instead of two.
func (c *Cluster) tryAcquire(ctx context.Context, key client.ObjectKey, req LockRequest) (leaseState, *coordinationv1.Lease, error) {
	lease, err := c.createLease(ctx, key, req)
	if !errors.Is(err, errHeld) {
		return leaseState{}, lease, err
	}
	// There is one: read it, to see whose and whether expired.
	var current coordinationv1.Lease
	err = c.leaseClient().Get(ctx, key, &current)
	if apierrors.IsNotFound(err) {
		lease, err := c.createLease(ctx, key, req)
		return leaseState{}, lease, err
	}
	if err != nil {
		return leaseState{}, nil, fmt.Errorf("reading lease %s: %w", key, err)
	}
	state := leaseState{}
	if current.Spec.HolderIdentity != nil {
		state.holder = *current.Spec.HolderIdentity
	}
	if current.Spec.AcquireTime != nil {
		state.since = current.Spec.AcquireTime.Time
	}
	if state.holder != "" && state.holder != req.Holder && !c.observed.expired(c.clk(), key, &current, req.TTL) {
		return state, nil, errHeld
	}
	return state, &current, c.takeOver(ctx, key, req, &current)
}

// createLease creates the Lease held by req.Holder; errHeld if there is one.
func (c *Cluster) createLease(ctx context.Context, key client.ObjectKey, req LockRequest) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(c.clk().Now())
	seconds := int32(req.TTL / time.Second)
	holder := req.Holder
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: req.Labels},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now,
		},
	}
	if err := c.leaseClient().Create(ctx, lease); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, errHeld
		}
		return nil, fmt.Errorf("creating lease %s: %w", key, err)
	}
	return lease, nil
}

// takeOver writes lease, an expired or free one, as held by req.Holder.
// The update carries the resourceVersion we read: if another holder raced
// us to it (or its holder renewed it after all), the API server refuses
// and we keep waiting.
func (c *Cluster) takeOver(ctx context.Context, key client.ObjectKey, req LockRequest, lease *coordinationv1.Lease) error {
	now := metav1.NewMicroTime(c.clk().Now())
	seconds := int32(req.TTL / time.Second)
	holder := req.Holder
	transitions := int32(1)
	if lease.Spec.LeaseTransitions != nil {
		transitions = *lease.Spec.LeaseTransitions + 1
	}
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now, LeaseTransitions: &transitions,
	}
	if len(req.Labels) > 0 {
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		maps.Copy(lease.Labels, req.Labels)
	}
	if err := c.leaseClient().Update(ctx, lease); err != nil {
		if apierrors.IsConflict(err) {
			return errHeld
		}
		return fmt.Errorf("taking over lease %s: %w", key, err)
	}
	return nil
}

// versionOf is the version of a Lease the API server has just written.
func versionOf(l *coordinationv1.Lease) leaseVersion {
	return leaseVersion{uid: l.UID, resourceVersion: l.ResourceVersion}
}

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
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var lease coordinationv1.Lease
		if err := l.c.leaseClient().Get(ctx, l.key, &lease); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if holder := holderOf(&lease); holder != l.req.Holder {
			// Not ours to delete: someone took it over, so the operation
			// under it was not alone at the end (Err says so).
			l.lose(l.takenOver(holder))
			return nil
		}
		err := l.c.leaseClient().Delete(ctx, &lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		return err // a conflict is tried again
	})
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("releasing lease %s: changed under every attempt: %w", l.key, err)
	}
	return fmt.Errorf("releasing lease %s: %w", l.key, err)
}

// ReleaseRetrying is Release tried again every second until it succeeds or
// ctx ends. It is for a Lease whose release within the caller's deadline
// failed (a loaded or restarting API server): left alone, the next
// operation on the cluster would wait out its TTL, and a cluster never
// operated on again would keep it.
func (l *Lock) ReleaseRetrying(ctx context.Context) error {
	var err error
	_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		err = l.Release(ctx)
		return err == nil, nil
	})
	return err
}
