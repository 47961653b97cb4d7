package bench

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestLeaseWaits: a Lease is waited for when, before the operation's create
// of it succeeds, the sidecar read it held or its create conflicted;
// renewals after the acquisition are not waits.
func TestLeaseWaits(t *testing.T) {
	const path = "/apis/coordination.k8s.io/v1/namespaces/magnum-p/leases"
	get := func(name string, code int) request {
		return request{method: http.MethodGet, path: path + "/" + name, code: code}
	}
	post := func(name string, code int) request {
		return request{method: http.MethodPost, path: path, name: name, code: code}
	}
	for _, tt := range []struct {
		name       string
		reqs       []request
		wantWaited []string
		wantTaken  int
	}{
		{"free at once, then renewed", []request{
			get("magnum-capi-a", 404), post("magnum-capi-a", 201), get("magnum-capi-a", 200),
			{method: http.MethodPut, path: path + "/magnum-capi-a", code: 200},
		}, nil, 1},
		{"held by another holder first", []request{
			get("magnum-capi-b", 200), get("magnum-capi-b", 404), post("magnum-capi-b", 201),
		}, []string{"magnum-capi-b"}, 1},
		{"lost the create race", []request{
			get("magnum-capi-c", 404), post("magnum-capi-c", 409), get("magnum-capi-c", 404), post("magnum-capi-c", 201),
		}, []string{"magnum-capi-c"}, 1},
		{"other Leases and objects are ignored", []request{
			get("kube-scheduler", 200), {method: http.MethodGet, path: "/api/v1/namespaces/magnum-p/secrets/x", code: 200},
			get("magnum-capi-d", 404), post("magnum-capi-d", 201),
		}, nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			waited, taken := leaseWaits(tt.reqs)
			if !slices.Equal(waited, tt.wantWaited) || taken != tt.wantTaken {
				t.Errorf("leaseWaits = %v, %d; want %v, %d", waited, taken, tt.wantWaited, tt.wantTaken)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tt := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 50, 3 * time.Millisecond},
		{ms(5, 1, 3, 2, 4), 100, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
	} {
		if got := percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
		}
	}
}
