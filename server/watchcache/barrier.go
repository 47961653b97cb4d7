package watchcache

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Read-your-writes. After the sidecar upgrades a release, the watch cache
// may still hold the objects from before: each kind has its own watch, and
// the events of one can arrive after the Helm release Secret that says the
// upgrade is done. A status derived then would report a rolled-out cluster
// "complete" before its rollout began.
//
// A Barrier records the resourceVersion of every object of the cluster as
// the API server holds it right after the write (metadata-only lists, one per
// kind); the cache has caught up when, for each of those objects, the watch
// of its kind has delivered an event at least that recent. Events of one
// kind arrive in resourceVersion order, so that also covers objects deleted
// since. Comparing resourceVersions of one resource is what
// k8s.io/apimachinery/pkg/util/resourceversion is for.

// Barrier is the resourceVersions of one cluster's objects at one moment.
type Barrier struct {
	objects []barrierObject
}

type barrierObject struct {
	gk              schema.GroupKind
	namespace, name string
	resourceVersion string
}

// Len is how many objects the barrier holds.
func (b *Barrier) Len() int { return len(b.objects) }

// TakeBarrier lists, directly from the API server, the metadata of every
// object of cluster stackID in ns that the watch cache follows.
func (ch *Cache) TakeBarrier(ctx context.Context, ns, stackID string) (*Barrier, error) {
	b := &Barrier{}
	add := func(gvk schema.GroupVersionKind, sel client.MatchingLabels) error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(listKind(gvk))
		if err := ch.client.List(ctx, list, client.InNamespace(ns), sel); err != nil {
			return fmt.Errorf("listing %s of cluster %s in %s: %w", gvk.Kind, stackID, ns, err)
		}
		for _, o := range list.Items {
			b.objects = append(b.objects, barrierObject{gk: gvk.GroupKind(), namespace: o.Namespace, name: o.Name, resourceVersion: o.ResourceVersion})
		}
		return nil
	}
	for _, gvk := range labelledKinds {
		if err := add(gvk, client.MatchingLabels{indexLabel(gvk): stackID}); err != nil {
			return nil, err
		}
	}
	if err := add(SecretGVK, client.MatchingLabels{helmOwnerLabel: "helm", "name": stackID}); err != nil {
		return nil, err
	}
	return b, nil
}

// Behind names the first object of b whose state the cache has not caught up
// with, "" when it has caught up with all of them.
func (ch *Cache) Behind(b *Barrier) string {
	for _, o := range b.objects {
		if !ch.seen.reached(o.gk, o.resourceVersion) {
			return fmt.Sprintf("%s %s (resourceVersion %s)", o.gk.Kind, o.name, o.resourceVersion)
		}
	}
	return ""
}

// seenVersions is, per kind, the newest resourceVersion its watch has
// delivered to the cache's event handlers (which run after the cache's store
// was updated).
type seenVersions struct {
	mu     sync.Mutex
	newest map[schema.GroupKind]string
}

func newSeenVersions() *seenVersions {
	return &seenVersions{newest: map[schema.GroupKind]string{}}
}

func (s *seenVersions) observe(gk schema.GroupKind, obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	rv := m.GetResourceVersion()
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.newest[gk]
	if !ok {
		s.newest[gk] = rv
		return
	}
	if c, err := resourceversion.CompareResourceVersion(rv, cur); err == nil && c > 0 {
		s.newest[gk] = rv
	}
}

// reached reports whether the watch of gk has delivered rv or later. A
// resourceVersion that is not a number (an API server not backed by etcd)
// cannot be compared; it counts as reached rather than holding status back
// for ever.
func (s *seenVersions) reached(gk schema.GroupKind, rv string) bool {
	s.mu.Lock()
	cur, ok := s.newest[gk]
	s.mu.Unlock()
	if !ok {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(cur, rv)
	return err != nil || c >= 0
}
