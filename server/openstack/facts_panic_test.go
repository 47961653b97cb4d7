package openstack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/panics"
)

// panicOnImages is a transport with a bug that shows on Glance's requests
// while armed: they panic in the look-up's goroutine.
type panicOnImages struct {
	next  http.RoundTripper
	armed *atomic.Bool
}

func (p panicOnImages) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.armed.Load() && strings.Contains(r.URL.Path, "/images") {
		panic("a bug in the image look-up")
	}
	return p.next.RoundTrip(r)
}

// TestFactsPanicInALookUp: a panic in one of Facts' concurrent look-ups
// fails that call as a panics.Error, counted, and the next call works.
func TestFactsPanicInALookUp(t *testing.T) {
	c := newFakeCloud(t, Config{})
	var armed atomic.Bool
	c.adapter.http.Transport = panicOnImages{next: c.adapter.http.Transport, armed: &armed}
	spec := Objects{
		Cluster:    helmvalues.Cluster{UUID: "c0ffee00-0000-4000-8000-000000000003"},
		Template:   helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID, ExternalNetworkID: "public"},
		NodeGroups: []helmvalues.NodeGroup{{Name: "default-worker", FlavorID: "m1.small"}},
	}
	before := panics.Count("openstack/facts")
	armed.Store(true)
	_, err := c.adapter.Facts(context.Background(), c.caller, spec)
	var pe *panics.Error
	if !errors.As(err, &pe) {
		t.Fatalf("Facts with a panicking look-up: %v, want a panics.Error", err)
	}
	if got := panics.Count("openstack/facts"); got != before+1 {
		t.Errorf("counted %v panics, want %v", got, before+1)
	}
	armed.Store(false)
	if _, err := c.adapter.Facts(context.Background(), c.caller, spec); err != nil {
		t.Errorf("the next call: %v", err)
	}
}
