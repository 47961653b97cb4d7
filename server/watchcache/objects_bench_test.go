package watchcache

import (
	"context"
	"testing"
)

// BenchmarkCacheObjects is one status poll's read of a cluster with 13
// Machines and 6 addons from a synced cache, with the deep copy
// controller-runtime makes by default and without it (what Objects does).
func BenchmarkCacheObjects(b *testing.B) {
	ns := newNamespace(b)
	fakeCluster{Name: "bench", Machines: 13}.create(b, ns)
	ch := startCache(b, nil)
	synced(b, ch)
	ctx := context.Background()
	eventually(b, "the cluster cached", func() (bool, string) {
		objs, err := ch.Objects(ctx, ns, "bench")
		return err == nil && len(objs.Machines) == 13 && len(objs.Addons) == 6, "not yet"
	})
	for _, bc := range []struct {
		name string
		copy bool
	}{{"deep-copy", true}, {"no-copy", false}} {
		b.Run(bc.name, func(b *testing.B) {
			ch.copyReads = bc.copy
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ch.Objects(ctx, ns, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	ch.copyReads = false
}
