package watchcache

import (
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// TestHandlerPanicSkipsTheEvent: the event handlers run in client-go's
// goroutines; a panic in one (here an object that is a nil pointer) is
// counted and skips that event, and the next event is handled.
func TestHandlerPanicSkipsTheEvent(t *testing.T) {
	ch := &Cache{log: slog.New(slog.DiscardHandler), seen: newSeenVersions()}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	h := ch.handler(gvk)
	before := panics.Count("watchcache/handler")
	h.OnAdd((*corev1.ConfigMap)(nil), false)
	h.OnUpdate(nil, (*corev1.ConfigMap)(nil))
	if got := panics.Count("watchcache/handler"); got != before+2 {
		t.Errorf("counted %v panics, want %v", got, before+2)
	}
	h.OnAdd(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42"}}, false)
	if !ch.seen.reached(gvk.GroupKind(), "42") {
		t.Error("the event after the panics was not handled")
	}
}
