package e2e

import (
	"context"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// leaseWatch records, from a watch, who held each Lease of a namespace and
// how many Leases existed at once: what the serialization tests assert on.
type leaseWatch struct {
	mu      sync.Mutex
	seen    map[string][]string // lease -> holders in order, repeats folded
	live    map[string]bool
	maxLive int
	labels  map[string]map[string]string
}

func watchLeases(t *testing.T, cfg *rest.Config, ns string) *leaseWatch {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := cs.CoordinationV1().Leases(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	lw := &leaseWatch{seen: map[string][]string{}, live: map[string]bool{}, labels: map[string]map[string]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			lw.record(ev.Type, l)
		}
	}()
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	return lw
}

func (lw *leaseWatch) record(typ watch.EventType, l *coordinationv1.Lease) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if typ == watch.Deleted {
		delete(lw.live, l.Name)
		return
	}
	lw.live[l.Name] = true
	lw.maxLive = max(lw.maxLive, len(lw.live))
	lw.labels[l.Name] = l.Labels
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	if h := lw.seen[l.Name]; len(h) == 0 || h[len(h)-1] != holder {
		lw.seen[l.Name] = append(h, holder)
	}
}

func (lw *leaseWatch) holders(name string) []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]string(nil), lw.seen[name]...)
}

func (lw *leaseWatch) leaseLabels(name string) map[string]string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.labels[name]
}

func (lw *leaseWatch) mostAtOnce() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.maxLive
}
