package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

func (c *Cluster) startRenewing(key client.ObjectKey, req LockRequest, lease *coordinationv1.Lease, log *slog.Logger) *Lock {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Lock{c: c, key: key, req: req, stop: cancel, done: make(chan struct{}), lost: make(chan struct{}), log: log,
		lease: lease, written: versionOf(lease), renewedAt: c.clk().Now()}
	go l.renew(ctx)
	return l
}

// renew renews the Lease every TTL/3 until Release stops it or it is lost.
// A panic in it loses the Lease: the operation stops, and Release still
// deletes the Lease.
func (l *Lock) renew(ctx context.Context) {
	defer close(l.done)
	var err error
	defer func() {
		if err != nil {
			l.lose(fmt.Errorf("lost lease %s (held as %s): its renewal failed: %w", l.key, l.req.Holder, err))
		}
	}()
	defer panics.Recover(ctx, l.log, "kube/leaseRenewal", &err)
	// Ends when Release cancels ctx, or when renewInTime gives the Lease up.
	_ = wait.PollUntilContextCancel(ctx, l.req.TTL/3, false, func(ctx context.Context) (bool, error) {
		return !l.renewInTime(ctx), nil
	})
}

// errLost: the Lease names another holder, or is gone.
var errLost = errors.New("lease lost")

// renewInTime renews the Lease, retrying until renewDeadline has passed on
// our clock since the last successful renewal; past it the Lease is lost
// (a contender may take it over a third of a TTL later). It reports whether
// the loop should go on.
func (l *Lock) renewInTime(ctx context.Context) bool {
	left := renewDeadline(l.req.TTL) - l.c.clk().Since(l.renewedAt)
	var holder string
	var last error // the last attempt's
	err := wait.PollUntilContextTimeout(ctx, renewRetry(l.req.TTL), left, true, func(pollCtx context.Context) (bool, error) {
		// The request runs to its answer, within the deadline, even when
		// Release stops the loop meanwhile: Release then knows what our
		// last write was.
		reqCtx, cancel := context.WithTimeout(context.WithoutCancel(pollCtx), max(left, time.Second))
		defer cancel()
		if holder, last = l.renewOnce(reqCtx); last != nil {
			if errors.Is(last, errLost) {
				return false, last
			}
			l.log.Warn("renewing the cluster lease", "lease", l.key.String(), "err", last)
			return false, nil
		}
		return true, nil
	})
	switch {
	case err == nil:
		return true
	case ctx.Err() != nil:
		return false // released
	case errors.Is(err, errLost):
		l.lose(l.takenOver(holder))
	default:
		l.lose(&RenewalError{Lease: l.key.String(), Holder: l.req.Holder, Deadline: renewDeadline(l.req.TTL), Err: cmp.Or(last, err)})
	}
	return false
}

// takenOver is the error for the Lease taken over by newHolder.
func (l *Lock) takenOver(newHolder string) error {
	why := "another holder took it over"
	if newHolder != "" {
		why += " (" + newHolder + ")"
	}
	return &LostError{Lease: l.key.String(), Holder: l.req.Holder, Why: why}
}

// renewOnce writes a new renewTime on the Lease as we last left it: the
// update carries its resourceVersion, so a Lease someone else wrote since
// is refused. A refused Lease that still names us was changed by a write of
// ours whose answer we did not get (holders are unique per acquisition, and
// only the holder writes its own name): we adopt it and try again. One that
// names someone else, or is gone, is lost (errLost, with the new holder).
func (l *Lock) renewOnce(ctx context.Context) (string, error) {
	lease := l.lease.DeepCopy()
	sent := l.c.clk().Now()
	renewed := metav1.NewMicroTime(sent)
	lease.Spec.RenewTime = &renewed
	err := l.c.leaseClient().Update(ctx, lease)
	switch {
	case err == nil:
		l.lease, l.written, l.renewedAt = lease, versionOf(lease), sent
		return "", nil
	case apierrors.IsNotFound(err):
		return "", errLost
	case !apierrors.IsConflict(err):
		// Whether it was applied is unknown: Release reads the Lease
		// rather than trust an older version.
		l.written = leaseVersion{}
		return "", fmt.Errorf("renewing lease %s: %w", l.key, err)
	}
	var current coordinationv1.Lease
	if err := l.c.leaseClient().Get(ctx, l.key, &current); err != nil {
		if apierrors.IsNotFound(err) {
			return "", errLost
		}
		return "", fmt.Errorf("reading lease %s: %w", l.key, err)
	}
	if h := current.Spec.HolderIdentity; h == nil || *h != l.req.Holder {
		return holderOf(&current), errLost
	}
	l.lease, l.written = &current, leaseVersion{}
	return "", fmt.Errorf("renewing lease %s: changed by a write of ours, trying again", l.key)
}

func holderOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// lose marks the Lease lost, once: Lost is closed and Err says why
// (a *LostError or a *RenewalError).
func (l *Lock) lose(why error) {
	l.loseOnce.Do(func() {
		l.lostErr = why
		l.log.Warn("lost the cluster lease", "lease", l.key.String(), "holder", l.req.Holder, "err", why)
		close(l.lost)
	})
}

// Err is why the Lease was lost, with during (the operation's own error,
// if any) in its text; nil while it is held.
func (l *Lock) Err(during error) error {
	select {
	case <-l.lost:
	default:
		return nil
	}
	switch e := l.lostErr.(type) {
	case *LostError:
		c := *e
		c.During = during
		return &c
	case *RenewalError:
		c := *e
		c.During = during
		return &c
	}
	return l.lostErr
}
