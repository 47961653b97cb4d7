package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// WatchCache is what the operations and the status path read of one
// management cluster's watch cache (server/watchcache implements it): one
// cluster's objects from memory, and the read-your-writes barrier
// (status_guard.go).
type WatchCache interface {
	// Objects is everything the cache holds for the cluster stackID in ns;
	// it waits for the first sync within ctx's deadline.
	Objects(ctx context.Context, ns, stackID string) (*watchcache.Objects, error)
	// TakeBarrier records, from the API server, the resourceVersions of the
	// cluster's objects now.
	TakeBarrier(ctx context.Context, ns, stackID string) (*watchcache.Barrier, error)
	// Behind names an object of b the cache has not caught up with; "" when
	// it has caught up with all.
	Behind(b *watchcache.Barrier) string
	// OnDelete has f told of each cluster (namespace, stack id) one of
	// whose objects the cache sees deleted; called before the cache starts.
	OnDelete(f func(ns, stackID string))
	// OnChange has f told of each cluster whose Cluster or control plane
	// the cache sees added, changed or deleted; called before the cache
	// starts.
	OnChange(f func(ns, stackID string))
}
