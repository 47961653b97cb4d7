package kube

import (
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lease expiry is judged on the contender's own clock only, as client-go's
// leader election does: another sidecar's clock may be minutes off ours, so
// the holder's renewTime says nothing we can compare with our now. A
// contender instead notes when it first saw each resourceVersion of a Lease
// (observedTime); a Lease whose resourceVersion has not changed for its
// whole duration on our clock was not renewed, and is taken over. The
// holder, for its part, gives the Lease up (Lost) when it has not renewed it
// for renewDeadline on its clock, less than the duration, so it has stopped
// before any contender can have begun.

// observation is a Lease's resourceVersion and when, on our clock, we
// first saw it.
type observation struct {
	resourceVersion string
	at              time.Time
}

// leaseObservations are the Leases this sidecar waits for, per key. They
// are kept across AcquireLock calls, so a retried operation goes on
// counting where the last one stopped (a caller's deadline is shorter than
// a Lease's duration), and forgotten when a Lease is taken.
type leaseObservations struct {
	mu   sync.Mutex
	seen map[client.ObjectKey]observation
}

// expired reports whether lease, held by someone else, has gone unrenewed
// for its duration (fallback if it states none) by clk.
func (o *leaseObservations) expired(clk clock.PassiveClock, key client.ObjectKey, lease *coordinationv1.Lease, fallback time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[client.ObjectKey]observation{}
	}
	seen, ok := o.seen[key]
	if !ok || seen.resourceVersion != lease.ResourceVersion {
		o.seen[key] = observation{resourceVersion: lease.ResourceVersion, at: clk.Now()}
		return false
	}
	duration := fallback
	if s := lease.Spec.LeaseDurationSeconds; s != nil {
		duration = time.Duration(*s) * time.Second
	}
	return clk.Since(seen.at) > duration
}

// forget drops what we observed of key's Lease: we hold it now, or it is gone.
func (o *leaseObservations) forget(key client.ObjectKey) {
	o.mu.Lock()
	delete(o.seen, key)
	o.mu.Unlock()
}

// renewDeadline is how long a holder goes on without a successful renewal
// before it gives the Lease up: two thirds of the TTL (client-go's default
// ratio, 10 s of 15), leaving a third for the operation to see its context
// cancelled before a contender can take over.
func renewDeadline(ttl time.Duration) time.Duration { return ttl * 2 / 3 }

// renewRetry is the pause between renewal attempts after a failure.
func renewRetry(ttl time.Duration) time.Duration { return max(ttl/15, 100*time.Millisecond) }

// LostError says another sidecar took the cluster's Lease over while an
// operation held it (it judged the Lease expired: we had stalled): the
// operation was cancelled so that it stops writing. It is Aborted, as
// LockedError is: the shim's answer to both is to retry once the other
// operation is done; Unavailable would blame a dependency that is down.
type LostError struct {
	Lease, Holder string
	// Why says how it was found lost; During is the operation's own error, if any.
	Why    string
	During error
}

func (e *LostError) Error() string {
	msg := fmt.Sprintf("lost lease %s (held as %s): %s", e.Lease, e.Holder, e.Why)
	if e.During != nil {
		msg += "; the operation, cancelled: " + e.During.Error()
	}
	return msg
}

// UserMessage is what Magnum's user reads: the Lease and the sidecars are
// the operator's, in the log.
func (e *LostError) UserMessage() string {
	return "another instance of the Cluster API driver took over this cluster during the operation, which was stopped; retry it"
}

// Aborted classifies the error for the gRPC boundary: retry.
func (e *LostError) Aborted() bool { return true }

// RenewalError says the holder could not renew the cluster's Lease within
// renewDeadline and gave it up, cancelling the operation, before a
// contender could take it over. It wraps the last renewal's error, so the
// gRPC boundary classifies it as that (the management API not answering is
// Unavailable); During is the operation's own error, if any, in its text.
type RenewalError struct {
	Lease, Holder string
	Deadline      time.Duration
	Err, During   error
}

func (e *RenewalError) Error() string {
	msg := fmt.Sprintf("gave up lease %s (held as %s): no renewal succeeded within %s: %v", e.Lease, e.Holder, e.Deadline, e.Err)
	if e.During != nil {
		msg += "; the operation, cancelled: " + e.During.Error()
	}
	return msg
}

func (e *RenewalError) Unwrap() error { return e.Err }
