package capisim_test

import (
	"context"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recorder watches the objects of one kind in a namespace and records, per
// object, the successive values of one field: what polling could miss.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]string
}

// record starts a recorder of the field at path of the objects of gvk.
func record(t *testing.T, namespace string, gvk schema.GroupVersionKind, path ...string) *recorder {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	w, err := wc.Watch(context.Background(), list, client.InNamespace(namespace))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{seen: map[string][]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
			s, _ := v.(string)
			rec.mu.Lock()
			vals := rec.seen[u.GetName()]
			if len(vals) == 0 || vals[len(vals)-1] != s {
				rec.seen[u.GetName()] = append(vals, s)
			}
			rec.mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return rec
}

// values returns the recorded values of one object.
func (r *recorder) values(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen[name]...)
}

// all returns the recorded values of every object.
func (r *recorder) all() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for k, v := range r.seen {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// inOrder reports whether want appears in seen as a subsequence.
func inOrder(seen []string, want ...string) bool {
	i := 0
	for _, s := range seen {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}
