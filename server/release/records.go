package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// records is the storage driver of every action's Configuration: Helm's
// Secrets driver, with three things of ours on its public interface.
//
//   - The history is read once per operation (History): the caller holds the
//     cluster's lock, so the only writes of the release are made through
//     this driver, and each of them makes the next read ask the API server.
//   - Every write first asks ready (Target.BeforeWrite): the operation's
//     own preparation runs beside the reads and rendering, and nothing of
//     the release is written if it fails. A release's objects are written
//     only after its record, so the record's first write is the operation's
//     point of no return.
//   - wrote (Target.Wrote) hears of every write that succeeded.
type records struct {
	driver.Driver
	history *History
	ready   func() error
	wrote   func()
}

// newRecords is Helm's Secrets driver of the release's namespace, its reads
// made with reads (Helm's driver sends every request with
// context.Background(), which would let a read of a hung API server outlast
// the caller's deadline).
func newRecords(secrets corev1client.SecretInterface, reads context.Context, t Target, log func(string, ...any)) records {
	d := driver.NewSecrets(callerReads{SecretInterface: secrets, ctx: reads})
	if log != nil {
		d.Log = log
	}
	h := t.History
	if h == nil {
		h = new(History)
	}
	return records{Driver: d, history: h, ready: t.BeforeWrite, wrote: t.Wrote}
}

// History is what the actions of one operation on a release have read of
// its history since their last write of it. Share one only while holding
// the cluster's lock. The zero value is ready to use.
type History struct {
	mu sync.Mutex
	// name is the release whose history all holds; read says all is set.
	name string
	all  []*release.Release
	read bool
	// writes counts the writes, so that a read that a write overtook is
	// not kept.
	writes int
}

// Query answers a query of one release's records from the history read
// last, filtered by its labels; the first reads the whole history.
func (r records) Query(q map[string]string) ([]*release.Release, error) {
	name := q["name"]
	if name == "" || q["owner"] != "helm" {
		return r.Driver.Query(q)
	}
	all, ok, writes := r.history.cached(name)
	if !ok {
		var err error
		all, err = r.Driver.Query(map[string]string{"name": name, "owner": "helm"})
		if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return nil, err
		}
		r.history.keep(name, all, writes)
	}
	sel := labels.SelectorFromSet(q)
	var out []*release.Release
	for _, rel := range all {
		if sel.Matches(labels.Set(rel.Labels)) {
			out = append(out, copyRelease(rel))
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

func (h *History) cached(name string) (all []*release.Release, ok bool, writes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.all, h.read && h.name == name, h.writes
}

// keep stores a history read that started after writes writes, unless a
// write came since.
func (h *History) keep(name string, all []*release.Release, writes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writes == writes {
		h.name, h.all, h.read = name, all, true
	}
}

// forget drops the history read: the release changes (before a write and
// after it, as a write refused may still have been applied).
func (h *History) forget() {
	h.mu.Lock()
	h.all, h.read = nil, false
	h.writes++
	h.mu.Unlock()
}

// copyRelease is r with its own Info and labels, the parts actions change
// on the records they read before writing them back.
func copyRelease(r *release.Release) *release.Release {
	c := *r
	if r.Info != nil {
		info := *r.Info
		c.Info = &info
	}
	c.Labels = maps.Clone(r.Labels)
	return &c
}

func (r records) Create(key string, rls *release.Release) (err error) {
	return r.write(func() error { return r.Driver.Create(key, rls) })
}

func (r records) Update(key string, rls *release.Release) (err error) {
	return r.write(func() error { return r.Driver.Update(key, rls) })
}

func (r records) Delete(key string) (rls *release.Release, err error) {
	err = r.write(func() (err error) { rls, err = r.Driver.Delete(key); return err })
	return rls, err
}

// write makes one write of the release once ready allows it. Helm calls it
// from goroutines of its own, so a panic in it (or in ready) fails the
// write alone.
func (r records) write(w func() error) (err error) {
	defer panics.Recover(context.Background(), nil, "release/records", &err)
	if r.ready != nil {
		if err := r.ready(); err != nil {
			return fmt.Errorf("before writing the release: %w", err)
		}
	}
	r.history.forget()
	defer r.history.forget()
	if err := w(); err != nil {
		return err
	}
	if r.wrote != nil {
		r.wrote()
	}
	return nil
}

// callerReads is the release Secrets' client whose reads end with ctx.
// Writes keep Helm's context: a record write runs to its end.
type callerReads struct {
	corev1client.SecretInterface
	ctx context.Context
}

func (c callerReads) Get(_ context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	return c.SecretInterface.Get(c.ctx, name, opts)
}

func (c callerReads) List(_ context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	return c.SecretInterface.List(c.ctx, opts)
}
