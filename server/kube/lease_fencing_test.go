package kube

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// skewed is a clock off the real one by offset, as another host's may be.
type skewed struct{ offset time.Duration }

func (s skewed) Now() time.Time                  { return time.Now().Add(s.offset) }
func (s skewed) Since(t time.Time) time.Duration { return s.Now().Sub(t) }

// TestLeaseFencingWithSkewedClocks: two sidecars whose clocks disagree by
// minutes, far more than the TTL. The contender never takes a Lease that
// is being renewed; once the holder stops renewing, it takes the Lease a
// TTL after the last renewal, on its own clock, not minutes early or late;
// and the old holder, finishing, finds it lost the Lease (Lost closed, an
// Aborted LostError) and leaves the new holder's Lease alone.
func TestLeaseFencingWithSkewedClocks(t *testing.T) {
	const ttl = 3 * time.Second
	tests := []struct {
		name                    string
		holderSkew, contenderAt time.Duration
	}{
		{"the holder's clock 5 minutes behind", -5 * time.Minute, 0},
		{"the holder's clock 5 minutes ahead", 5 * time.Minute, 0},
		{"the contender's clock 10 minutes ahead", 0, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			ctx := context.Background()
			holder, contender := leaseClient(t), leaseClient(t)
			holder.clock, contender.clock = skewed{tt.holderSkew}, skewed{tt.contenderAt}
			req := func(who string) LockRequest { return LockRequest{Namespace: ns, Name: "skew", Holder: who, TTL: ttl} }
			a, err := holder.AcquireLock(ctx, req("sidecar-a/op1"), quiet)
			if err != nil {
				t.Fatal(err)
			}

			// Two TTLs of waiting while the holder renews: never taken.
			wait, cancel := context.WithTimeout(ctx, 2*ttl)
			_, err = contender.AcquireLock(wait, req("sidecar-b/op1"), quiet)
			cancel()
			var locked *LockedError
			if !errors.As(err, &locked) {
				t.Fatalf("the contender, while the holder renews: %v, want a LockedError", err)
			}

			// The holder stalls: it stops renewing, without giving the Lease back.
			a.stop()
			<-a.done
			l, _ := getLease(t, ns, "skew")
			lastRenewal := l.Spec.RenewTime.Add(-tt.holderSkew) // on the real clock
			wait, cancel = context.WithTimeout(ctx, 5*ttl)
			b, err := contender.AcquireLock(wait, req("sidecar-b/op2"), quiet)
			cancel()
			if err != nil {
				t.Fatalf("the contender, once the holder stopped renewing: %v", err)
			}
			if waited := time.Since(lastRenewal); waited < ttl {
				t.Errorf("taken over %s after the last renewal, before the TTL (%s)", waited, ttl)
			}

			// The old holder comes back to give the Lease up: it learns it lost it.
			if err := a.Release(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case <-a.Lost():
			default:
				t.Error("the old holder's Lost is open after it found another holder")
			}
			var lost *LostError
			if err := a.Err(nil); !errors.As(err, &lost) || !lost.Aborted() {
				t.Errorf("the old holder's Err: %v, want an Aborted LostError", err)
			}
			if l, ok := getLease(t, ns, "skew"); !ok || *l.Spec.HolderIdentity != "sidecar-b/op2" {
				t.Error("the old holder's release deleted the new holder's Lease")
			}
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// refuseUpdates answers every Update 503 once armed, as an API server
// the holder cannot reach does.
type refuseUpdates struct {
	client.Client
	armed *bool
}

func (r refuseUpdates) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if *r.armed {
		return apierrors.NewServiceUnavailable("the API server is unreachable")
	}
	return r.Client.Update(ctx, obj, opts...)
}

// TestLeaseLostWhenRenewalsFail: a holder that cannot renew for two thirds
// of the TTL gives the Lease up (Lost; a RenewalError wrapping the last
// renewal's error, so the answer blames the API server) before any
// contender may take it over, so its operation stops first.
func TestLeaseLostWhenRenewalsFail(t *testing.T) {
	const ttl = 3 * time.Second
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "cut", Holder: "sidecar-a/op1", TTL: ttl}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	armed := true
	c.leases = refuseUpdates{Client: c.leaseClient(), armed: &armed}
	cut := time.Now()
	select {
	case <-lock.Lost():
	case <-time.After(2 * ttl):
		t.Fatal("Lost still open two TTLs after renewals began to fail")
	}
	if after := time.Since(cut); after >= ttl {
		t.Errorf("gave the Lease up %s after the last renewal, not before the TTL (%s)", after, ttl)
	}
	var gaveUp *RenewalError
	if err := lock.Err(nil); !errors.As(err, &gaveUp) || !apierrors.IsServiceUnavailable(err) {
		t.Errorf("Err: %v, want a RenewalError wrapping the API server's 503", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := getLease(t, ns, "cut"); ok {
		t.Error("the Lease outlived its release")
	}
}

// panicUpdates is a Lease client with a bug in Update while armed.
type panicUpdates struct {
	client.Client
	armed *atomic.Bool
}

func (p panicUpdates) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if p.armed.Load() {
		panic("a bug in the renewal")
	}
	return p.Client.Update(ctx, obj, opts...)
}

// TestLeaseRenewalPanic: a panic in the renewal goroutine does not take
// the process down: it is counted, the Lease is lost (the operation under
// it stops), and Release still deletes it.
func TestLeaseRenewalPanic(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "bug", Holder: "sidecar-a/op1", TTL: 3 * time.Second}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	before := panics.Count("kube/leaseRenewal")
	var armed atomic.Bool
	armed.Store(true)
	c.leases = panicUpdates{Client: c.leaseClient(), armed: &armed}
	select {
	case <-lock.Lost():
	case <-time.After(6 * time.Second):
		t.Fatal("Lost still open after the renewal panicked")
	}
	if got := panics.Count("kube/leaseRenewal"); got != before+1 {
		t.Errorf("counted %v panics, want %v", got, before+1)
	}
	var pe *panics.Error
	if err := lock.Err(nil); !errors.As(err, &pe) {
		t.Errorf("Err: %v, want the panic", err)
	}
	armed.Store(false)
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := getLease(t, ns, "bug"); ok {
		t.Error("the Lease outlived its release")
	}
}
