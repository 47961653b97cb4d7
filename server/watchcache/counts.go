package watchcache

import "context"

// Counts reports how many objects of each kind the cache holds, for the
// metrics: the length of each informer's store, read without copying or
// listing anything.
func (ch *Cache) Counts(ctx context.Context) (map[string]int, error) {
	if err := ch.WaitForSync(ctx); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for gvk, store := range ch.indexers {
		kind := gvk.Kind
		if gvk == SecretGVK {
			kind = "HelmReleaseSecret"
		}
		counts[kind] = len(store.ListKeys())
	}
	return counts, nil
}
