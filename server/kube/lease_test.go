package kube

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func leaseClient(t *testing.T) *Cluster {
	t.Helper()
	c, err := Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func getLease(t *testing.T, ns, name string) (*coordinationv1.Lease, bool) {
	t.Helper()
	var l coordinationv1.Lease
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: LeasePrefix + name}, &l)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return &l, true
}

// TestLeaseExcludesAndReleases: a held Lease makes the next holder wait,
// a waiter whose deadline passes gets an Aborted error naming the holder,
// releasing deletes the Lease and lets the waiter in; the Lease carries
// the requested labels and keeps its acquire time across renewals.
func TestLeaseExcludesAndReleases(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	labels := map[string]string{"magnum.openstack.org/cluster-uuid": "u1"}
	req := func(holder string) LockRequest {
		return LockRequest{Namespace: ns, Name: "demo", Holder: holder, TTL: 3 * time.Second, Labels: labels}
	}
	first, err := c.AcquireLock(ctx, req("sidecar-a/op1"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := getLease(t, ns, "demo")
	if !ok || *l.Spec.HolderIdentity != "sidecar-a/op1" || l.Labels["magnum.openstack.org/cluster-uuid"] != "u1" {
		t.Fatalf("lease after acquire: %+v", l)
	}
	acquired := l.Spec.AcquireTime.Time

	// Held past several renewals (TTL/3 each): a waiter gives up at its
	// deadline with the holder named; the Lease never expired meanwhile.
	short, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
	_, err = c.AcquireLock(short, req("sidecar-b/op2"), quiet)
	cancel()
	var locked *LockedError
	if !errors.As(err, &locked) || !locked.Aborted() || locked.Holder != "sidecar-a/op1" || !strings.Contains(err.Error(), "sidecar-a/op1") {
		t.Fatalf("waiting on a held lease: %v, want a LockedError naming sidecar-a/op1", err)
	}
	l, _ = getLease(t, ns, "demo")
	if !l.Spec.AcquireTime.Time.Equal(acquired) || !l.Spec.RenewTime.Time.After(acquired) {
		t.Errorf("renewals: acquire %s -> %s, renew %s; want the acquire time kept and renew time advanced",
			acquired, l.Spec.AcquireTime.Time, l.Spec.RenewTime.Time)
	}

	// The same sidecar's second operation is another holder: it waits too.
	got := make(chan *Lock, 1)
	go func() {
		second, err := c.AcquireLock(ctx, req("sidecar-a/op3"), quiet)
		if err != nil {
			t.Error(err)
		}
		got <- second
	}()
	select {
	case <-got:
		t.Fatal("a second operation got the lease while the first held it")
	case <-time.After(500 * time.Millisecond):
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if second == nil {
		t.FailNow()
	}
	l, _ = getLease(t, ns, "demo")
	if *l.Spec.HolderIdentity != "sidecar-a/op3" {
		t.Errorf("holder after release: %s", *l.Spec.HolderIdentity)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := getLease(t, ns, "demo"); ok {
		t.Error("the lease outlived its release")
	}
}

// TestLeaseTakenOverAfterTTL: a Lease whose holder died (it stopped
// renewing) is taken over once its TTL has passed, not before; the dead
// holder's Lock, were it alive, would learn it lost.
func TestLeaseTakenOverAfterTTL(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	// What a killed sidecar leaves: a Lease renewed just now, never again.
	dead := "sidecar-dead/op1"
	now := metav1.NewMicroTime(time.Now())
	ttl := int32(3)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: LeasePrefix + "demo"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &dead, LeaseDurationSeconds: &ttl, AcquireTime: &now, RenewTime: &now},
	}
	if err := env.Client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "demo", Holder: "sidecar-b/op1", TTL: 3 * time.Second}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	tookOver := time.Now()
	if !tookOver.After(now.Add(3 * time.Second)) {
		t.Errorf("took the lease over at %s, before the dead holder's TTL ended (%s)", tookOver, now.Add(3*time.Second))
	}
	l, _ := getLease(t, ns, "demo")
	if *l.Spec.HolderIdentity != "sidecar-b/op1" || l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions != 1 {
		t.Errorf("after take-over: holder %s transitions %v", *l.Spec.HolderIdentity, l.Spec.LeaseTransitions)
	}

	// Someone else takes it from us (we "stalled"): Lost closes.
	other := "sidecar-c/op1"
	l.Spec.HolderIdentity = &other
	l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(time.Hour)}
	if err := env.Client.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lock.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost not closed after another holder took the lease")
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l, ok := getLease(t, ns, "demo"); !ok || *l.Spec.HolderIdentity != other {
		t.Error("releasing a lost lease deleted the new holder's lease")
	}
}

func TestLeaseRequestChecked(t *testing.T) {
	c := leaseClient(t)
	for _, req := range []LockRequest{
		{Namespace: "ns", Name: "demo", TTL: time.Minute},
		{Namespace: "ns", Name: "demo", Holder: "h", TTL: time.Second},
	} {
		if _, err := c.AcquireLock(context.Background(), req, quiet); err == nil {
			t.Errorf("%+v accepted", req)
		}
	}
}

// TestLeaseReleaseAfterLateRenewal: a renewal of ours that reaches the API
// server after the write Release knows of, just before its delete (a
// request whose caller had stopped waiting for it), changes the
// resourceVersion; Release reads the Lease again and still deletes it
// instead of leaving it behind.
func TestLeaseReleaseAfterLateRenewal(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "late", Holder: "sidecar-a/op1", TTL: 3 * time.Second}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	late := true
	c.leases = beforeDelete{Client: c.leaseClient(), hook: func(ctx context.Context, cl client.Client, obj client.Object) {
		if _, ok := obj.(*coordinationv1.Lease); ok && late {
			late = false
			renewed := &coordinationv1.Lease{}
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), renewed); err != nil {
				t.Errorf("reading the Lease for the late renewal: %v", err)
				return
			}
			now := metav1.NewMicroTime(time.Now())
			renewed.Spec.RenewTime = &now
			if err := cl.Update(ctx, renewed); err != nil {
				t.Errorf("the late renewal: %v", err)
			}
		}
	}}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if late {
		t.Fatal("the late renewal never ran")
	}
	if l, ok := getLease(t, ns, "late"); ok {
		t.Errorf("the Lease was left behind: %+v", l.Spec)
	}
}

// TestLeaseReleaseRetried: a release refused by the API server (here its
// first two deletes answer 503) can be retried, and ReleaseRetrying keeps
// at it until the Lease is gone.
func TestLeaseReleaseRetried(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "retried", Holder: "sidecar-a/op1", TTL: 30 * time.Second}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	refusals := 2
	c.leases = refuseDeletes{Client: c.leaseClient(), left: &refusals}
	if err := lock.Release(ctx); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("Release with the API server refusing: %v, want its 503", err)
	}
	if _, ok := getLease(t, ns, "retried"); !ok {
		t.Fatal("the refused release deleted the Lease")
	}
	retryCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := lock.ReleaseRetrying(retryCtx); err != nil {
		t.Fatalf("ReleaseRetrying: %v", err)
	}
	if refusals != 0 {
		t.Errorf("%d refusals unused: the retry did not go through the API server", refusals)
	}
	if l, ok := getLease(t, ns, "retried"); ok {
		t.Errorf("the Lease was left behind: %+v", l.Spec)
	}
}

// refuseDeletes answers the first *left deletes 503, as a restarting API
// server does.
type refuseDeletes struct {
	client.Client
	left *int
}

func (r refuseDeletes) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if *r.left > 0 {
		*r.left--
		return apierrors.NewServiceUnavailable("the API server is restarting")
	}
	return r.Client.Delete(ctx, obj, opts...)
}

// beforeDelete runs hook before every Delete.
type beforeDelete struct {
	client.Client
	hook func(context.Context, client.Client, client.Object)
}

func (b beforeDelete) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	b.hook(ctx, b.Client, obj)
	return b.Client.Delete(ctx, obj, opts...)
}

// slowReads delays every Lease read after the first by longer than a
// waiter's deadline, so the deadline falls during a read, not between two.
type slowReads struct {
	next  http.RoundTripper
	reads atomic.Int32
}

func (s *slowReads) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/leases/") && s.reads.Add(1) > 1 {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return s.next.RoundTrip(r)
}

// TestLeaseWaitEndingDuringARead: a waiter whose deadline passes while it
// reads the Lease (a slow or loaded API server) is told the Lease is held
// (Aborted, retried by the shim), not handed the cut read's error (which
// would read as the management API being down).
func TestLeaseWaitEndingDuringARead(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	req := func(holder string) LockRequest {
		return LockRequest{Namespace: ns, Name: "slow", Holder: holder, TTL: time.Minute}
	}
	held, err := leaseClient(t).AcquireLock(ctx, req("sidecar-a/op1"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release(ctx) }()

	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return &slowReads{next: rt} }
	slow, err := Connect("slow", cfg)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	_, err = slow.AcquireLock(short, req("sidecar-b/op2"), quiet)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder != "sidecar-a/op1" {
		t.Fatalf("a wait ending during a read: %v, want a LockedError naming sidecar-a/op1", err)
	}
}

// TestLeaseFreeTakesTwoRequests: taking a Lease nobody holds is one create
// and giving it back one delete of the version written, with no reads.
func TestLeaseFreeTakesTwoRequests(t *testing.T) {
	c := leaseClient(t)
	ns := newNamespace(t)
	ctx := context.Background()
	var requests []string
	c.leases = recordRequests{Client: c.leaseClient(), verbs: &requests}
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "free", Holder: "sidecar-a/op1", TTL: time.Minute}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"create", "delete"}; !slices.Equal(requests, want) {
		t.Errorf("requests %v, want %v", requests, want)
	}
	if _, ok := getLease(t, ns, "free"); ok {
		t.Error("the Lease was left behind")
	}
}

// recordRequests records the verb of every request for a Lease.
type recordRequests struct {
	client.Client
	verbs *[]string
}

func (r recordRequests) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*r.verbs = append(*r.verbs, "get")
	return r.Client.Get(ctx, key, obj, opts...)
}

func (r recordRequests) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	*r.verbs = append(*r.verbs, "create")
	return r.Client.Create(ctx, obj, opts...)
}

func (r recordRequests) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	*r.verbs = append(*r.verbs, "update")
	return r.Client.Update(ctx, obj, opts...)
}

func (r recordRequests) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	*r.verbs = append(*r.verbs, "delete")
	return r.Client.Delete(ctx, obj, opts...)
}
