package watchcache

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// failedAddons remembers since when each addon (HelmRelease or Manifests,
// by UID) has been Failed, so that capistatus's grace period before a failed
// addon fails the cluster can run out. The cache strips managedFields, which
// is where the API server records when an object was last written, so the
// time is taken here, from the full object, before it is stripped.
//
// When the cache first sees an addon Failed, the clock starts at the newest
// write the API server recorded for it (the provider's write of the Failed
// phase, or a later change of its spec or metadata), else now. Using the
// recorded write rather than "now" keeps a sidecar restart from starting the
// grace period over; using the newest write of any kind rather than the last
// status write keeps an addon whose spec was just changed (a new attempt the
// provider has not made yet) from counting as failed since the old attempt.
// The clock keeps running while the provider retries the same spec (Failed ->
// Installing/Upgrading -> Failed), stops when the addon is Deployed or
// deleted, and starts over when its generation changes.
type failedAddons struct {
	mu    sync.Mutex
	now   func() time.Time
	since map[types.UID]failedSince
}

type failedSince struct {
	generation int64
	since      time.Time
}

func newFailedAddons(now func() time.Time) *failedAddons {
	return &failedAddons{now: now, since: map[types.UID]failedSince{}}
}

// observe records what one version of an addon says. It is called from the
// informer's transform, with the object as the API server sent it.
func (f *failedAddons) observe(obj *capistatus.AddonObject) {
	uid := obj.GetUID()
	if uid == "" {
		return
	}
	phase := obj.Status.Phase
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case obj.GetDeletionTimestamp() == nil && phase == "Failed":
		candidate := lastWrite(obj.GetManagedFields())
		if candidate.IsZero() {
			candidate = f.now()
		}
		prev, ok := f.since[uid]
		if ok && prev.generation == obj.GetGeneration() && !prev.since.After(candidate) {
			return // failing since earlier, still the same attempt
		}
		f.since[uid] = failedSince{generation: obj.GetGeneration(), since: candidate}
	case phase == "Deployed":
		delete(f.since, uid)
	}
}

// forget drops an addon that was deleted; obj may be a tombstone.
func (f *failedAddons) forget(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.since, m.GetUID())
}

// get is since when the addon with uid has been Failed; zero if it is not
// known to be.
func (f *failedAddons) get(uid types.UID) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.since[uid].since
}

// len is how many addons are tracked (for tests: nothing leaks).
func (f *failedAddons) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.since)
}

// transform records an addon's failure from the full object, then strips
// managedFields like every other kind's transform.
func (f *failedAddons) transform(strip toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if a := addonObject(in); a != nil {
			f.observe(a)
		}
		return strip(in)
	}
}

// lastWrite is the newest time any manager wrote the object, its status
// subresource included.
func lastWrite(fields []metav1.ManagedFieldsEntry) time.Time {
	var t time.Time
	for _, e := range fields {
		if e.Time != nil && e.Time.After(t) {
			t = e.Time.Time
		}
	}
	return t
}
