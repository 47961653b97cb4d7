package metrics

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cache is what the metrics need from one management cluster's watch cache
// (*watchcache.Cache implements it).
type Cache interface {
	// Synced reports whether the first list finished.
	Synced() bool
	// Counts returns how many objects of each kind the cache holds.
	Counts(ctx context.Context) (map[string]int, error)
}

// cacheCollector reads the caches at scrape time: counting is a walk over
// memory, so there is nothing to keep up to date between scrapes.
type cacheCollector struct {
	mu     sync.Mutex
	caches map[string]Cache

	synced  *prometheus.Desc
	objects *prometheus.Desc
	errors  *prometheus.Desc
}

func newCacheCollector() *cacheCollector {
	return &cacheCollector{
		caches: map[string]Cache{},
		synced: prometheus.NewDesc(Namespace+"_watch_cache_synced",
			"1 once the management cluster's watch cache finished its first list (status answers wait for it), else 0.",
			[]string{"management_cluster"}, nil),
		objects: prometheus.NewDesc(Namespace+"_watch_cache_objects",
			"Objects held in the management cluster's watch cache, by kind.",
			[]string{"management_cluster", "kind"}, nil),
		errors: prometheus.NewDesc(Namespace+"_watch_cache_count_errors",
			"1 if counting the watch cache's objects failed at this scrape, else 0.",
			[]string{"management_cluster"}, nil),
	}
}

// AddCache makes a management cluster's watch cache visible in the metrics.
func (m *Metrics) AddCache(managementCluster string, c Cache) {
	m.caches.mu.Lock()
	defer m.caches.mu.Unlock()
	m.caches.caches[managementCluster] = c
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.synced
	ch <- c.objects
	ch <- c.errors
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	names := make([]string, 0, len(c.caches))
	for name := range c.caches {
		names = append(names, name)
	}
	caches := make(map[string]Cache, len(c.caches))
	for k, v := range c.caches {
		caches[k] = v
	}
	c.mu.Unlock()
	sort.Strings(names)
	for _, name := range names {
		cache := caches[name]
		synced := cache.Synced()
		ch <- prometheus.MustNewConstMetric(c.synced, prometheus.GaugeValue, boolValue(synced), name)
		if !synced {
			// Listing an unsynced cache would block the scrape until it syncs.
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		counts, err := cache.Counts(ctx)
		cancel()
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.GaugeValue, boolValue(err != nil), name)
		if err != nil {
			continue
		}
		for kind, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(n), name, kind)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
