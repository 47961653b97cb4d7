package watchcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Index names for the watch cache.
const (
	// indexByCluster: each informer's index by namespace and the cluster
	// an object belongs to (byCluster).
	indexByCluster = "magnum-capi/cluster"
)

// NotSyncedError is returned while the cache has not finished its first list:
// answering then would report stale or missing objects.
type NotSyncedError struct {
	Cluster string
	// Problem is the last error listing or watching met, if any: why the
	// sync takes long (RBAC, a missing CRD, an unreachable API server).
	Problem string
}

func (e *NotSyncedError) Error() string {
	msg := fmt.Sprintf("the watch cache of management cluster %s is still syncing; retry shortly", e.Cluster)
	if e.Problem != "" {
		msg += " (last error: " + e.Problem + ")"
	}
	return msg
}

// UserMessage is what Magnum's user reads: the management cluster's name
// and the last error (which may name the API server's URL) are for the
// operator's log.
func (e *NotSyncedError) UserMessage() string {
	return "the magnum-capi sidecar's view of the management cluster is still syncing"
}

// Unavailable classifies the error for the gRPC boundary: retry shortly.
func (e *NotSyncedError) Unavailable() bool { return true }

// Cache is the sidecar's watch cache of one management cluster: informers on
// the kinds status is derived from, limited to objects carrying the chart's
// cluster label, with managedFields stripped and an index by cluster. It
// also remembers since when each addon has been Failed (managedFields are
// gone once an object is cached) and how far each kind's watch has got (for
// the read-your-writes barrier).
type Cache struct {
	name    string
	cache   cache.Cache
	client  client.Client // direct reads: the read-your-writes barrier
	log     *slog.Logger
	synced  chan struct{}
	problem atomic.Pointer[string]
	failed  *failedAddons
	seen    *seenVersions
	// intern shares the cached objects' repeated strings and values.
	intern *interner
	// indexers are the informers' stores, with our indexes.
	indexers map[schema.GroupVersionKind]toolscache.Indexer
	// copyReads deep-copies objects read from the cache (see Objects).
	copyReads bool
}

// indexLabel is the label that names an object's cluster: the chart's; on
// Helm's release Secrets the release's name (the cluster's stack id); on
// CAPO's servers CAPI's (capistatus.ClusterLabel). The cache selects by it.
func indexLabel(gvk schema.GroupVersionKind) string { return capistatus.ClusterLabel(gvk.GroupKind()) }

// selector selects what the cache holds of kind gvk: the objects carrying
// the label naming their cluster; of Secrets, Helm's release records.
func selector(gvk schema.GroupVersionKind) (labels.Selector, error) {
	if gvk == SecretGVK {
		return labels.SelectorFromSet(labels.Set{helmOwnerLabel: "helm"}), nil
	}
	hasLabel, err := labels.NewRequirement(indexLabel(gvk), selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*hasLabel), nil
}

// byCluster indexes objects of kind gk by namespace and the cluster they
// belong to (capistatus.ClusterOf, the rule SnapshotFromObjects picks by):
// "<namespace>/<stack id>", one copy shared by every kind's index.
func byCluster(gk schema.GroupKind, intern *interner) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return nil, nil
		}
		return []string{intern.name(o.GetNamespace() + "/" + capistatus.ClusterOf(gk, o))}, nil
	}
}

// New builds the watch cache of one management cluster: its informers and
// indexes, none of them running yet (Start). log receives list and watch
// problems.
func New(c *kube.Cluster, log *slog.Logger) (*Cache, error) {
	ch := &Cache{name: c.Name, client: c.Client, log: log, synced: make(chan struct{}), failed: newFailedAddons(time.Now), seen: newSeenVersions()}
	ch.intern = newInterner()
	strip := trimForStatus(cache.TransformStripManagedFields(), ch.intern)
	byObject := map[client.Object]cache.ByObject{}
	for _, gvk := range cachedKinds() {
		sel, err := selector(gvk)
		if err != nil {
			return nil, err
		}
		by := cache.ByObject{Label: sel}
		if isAddon(gvk) {
			// Addons keep managedFields until their failure is recorded.
			by.Transform = ch.failed.transform(strip)
		}
		byObject[typedObject(gvk)] = by
	}
	inf, err := cache.New(c.Config, cache.Options{
		Scheme:                   newCacheScheme(),
		ByObject:                 byObject,
		DefaultTransform:         strip,
		DefaultWatchErrorHandler: ch.watchError(log),
		NewInformer:              withoutNamespaceIndex,
	})
	if err != nil {
		return nil, fmt.Errorf("watch cache of %s: %w", c.Name, err)
	}
	ch.cache = inf
	if err := ch.index(); err != nil {
		return nil, err
	}
	return ch, nil
}

// withoutNamespaceIndex builds an informer as controller-runtime does but
// without the index by namespace it adds for its reader's namespaced
// Lists: nothing lists through that reader (a poll reads indexByCluster,
// Objects), and the index held every cached object's key once more.
func withoutNamespaceIndex(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	indexers = maps.Clone(indexers)
	delete(indexers, toolscache.NamespaceIndex)
	return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
}

// index adds our own indexes to the informers (not controller-runtime's
// field indexes), read directly by Objects: a poll then gets the cache's
// objects without a List's reflection, list allocation and scheme lookup.
// Indexes must be added before the informers run.
func (ch *Cache) index() error {
	ch.indexers = map[schema.GroupVersionKind]toolscache.Indexer{}
	for _, gvk := range cachedKinds() {
		informer, err := ch.cache.GetInformer(context.Background(), typedObject(gvk), cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching %s: %w", gvk.Kind, err)
		}
		if err := informer.AddIndexers(toolscache.Indexers{indexByCluster: byCluster(gvk.GroupKind(), ch.intern)}); err != nil {
			return fmt.Errorf("indexing %s: %w", gvk.Kind, err)
		}
		withIndexer, ok := informer.(interface{ GetIndexer() toolscache.Indexer })
		if !ok {
			return fmt.Errorf("the %s informer (%T) has no indexer", gvk.Kind, informer)
		}
		ch.indexers[gvk] = withIndexer.GetIndexer()
	}
	return nil
}

// Start runs the informers until ctx ends and returns at once; answers
// wait for the first sync (see Objects).
func (ch *Cache) Start(ctx context.Context) {
	go func() {
		err := panics.Run(ctx, ch.log, "watchcache/run", func() error { return ch.cache.Start(ctx) })
		if err != nil && !errors.Is(err, context.Canceled) {
			ch.setProblem("the watch cache stopped")
			ch.log.Error("watch cache stopped", "management_cluster", ch.name, "err", err)
		}
	}()
	go func() {
		// A panic here leaves the cache unsynced: status answers for this
		// management cluster say so (Unavailable), the others are unaffected.
		err := panics.Run(ctx, ch.log, "watchcache/start", func() error { ch.startInformers(ctx, ch.log); return nil })
		if err != nil {
			ch.setProblem("starting the watch cache failed unexpectedly")
		}
	}()
}

// startInformers asks for every informer so all of them start now, not at
// first use, registers the handlers that track addon deletions and watch
// progress, and marks the cache synced once every informer has listed.
func (ch *Cache) startInformers(ctx context.Context, log *slog.Logger) {
	for _, gvk := range cachedKinds() {
		informer, err := ch.cache.GetInformer(ctx, typedObject(gvk), cache.BlockUntilSynced(false))
		if err == nil {
			_, err = informer.AddEventHandler(ch.handler(gvk))
		}
		if err != nil {
			ch.setProblem(fmt.Sprintf("watching %s: %v", gvk.Kind, err))
			log.Error("starting informer", "management_cluster", ch.name, "kind", gvk.Kind, "err", err)
			return
		}
	}
	if ch.cache.WaitForCacheSync(ctx) {
		ch.problem.Store(nil)
		close(ch.synced)
		log.Info("watch cache synced", "management_cluster", ch.name)
	}
}

// handler follows one kind's watch: how far it got, and addons' deletion.
func (ch *Cache) handler(gvk schema.GroupVersionKind) toolscache.ResourceEventHandler {
	gk := gvk.GroupKind()
	// The handlers run in client-go's goroutines, which crash the process
	// on a panic: a bug here skips the event's bookkeeping instead.
	ctx, log, where := context.Background(), ch.log, "watchcache/handler"
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { defer panics.Recover(ctx, log, where, nil); ch.seen.observe(gk, obj) },
		UpdateFunc: func(_, obj any) { defer panics.Recover(ctx, log, where, nil); ch.seen.observe(gk, obj) },
		DeleteFunc: func(obj any) {
			defer panics.Recover(ctx, log, where, nil)
			ch.seen.observe(gk, obj)
			if isAddon(gvk) {
				ch.failed.forget(obj)
			}
		},
	}
}

// watchError keeps the last list or watch error while the cache has not
// synced, so that NotSyncedError can say why; client-go's own handler still
// logs it.
func (ch *Cache) watchError(log *slog.Logger) toolscache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *toolscache.Reflector, err error) {
		if !ch.Synced() {
			ch.setProblem(fmt.Sprintf("%s: %v", r.TypeDescription(), err))
			log.Warn("watch cache: listing or watching failed", "management_cluster", ch.name, "kind", r.TypeDescription(), "err", err)
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}
}

func (ch *Cache) setProblem(p string) { ch.problem.Store(&p) }

// WaitForSync blocks until the first sync, or until shortly before ctx's
// deadline: it returns NotSyncedError (Unavailable) with time to spare, so
// that the caller hears "still syncing, retry" instead of its own deadline
// passing without an answer.
func (ch *Cache) WaitForSync(ctx context.Context) error {
	select {
	case <-ch.synced:
		return nil
	default:
	}
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, giveUpAt(deadline, time.Now()))
		defer cancel()
	}
	select {
	case <-ch.synced:
		return nil
	case <-wait.Done():
		e := &NotSyncedError{Cluster: ch.name}
		if p := ch.problem.Load(); p != nil {
			e.Problem = *p
		}
		return e
	}
}

// giveUpAt is when WaitForSync stops waiting for a caller whose deadline is
// deadline: before it by a tenth of the time left, at most a second, which
// leaves the answer time to reach the caller.
func giveUpAt(deadline, now time.Time) time.Time {
	return deadline.Add(-min(deadline.Sub(now)/10, time.Second))
}

// Synced reports whether the first sync finished.
func (ch *Cache) Synced() bool {
	select {
	case <-ch.synced:
		return true
	default:
		return false
	}
}
