package e2e

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestWriteRequestCounts pins what one CreateCluster and one
// ResizeCluster cost the management API server, counted at the sidecar's
// own client transport and grouped by kind.
func TestWriteRequestCounts(t *testing.T) {
	counter := &requestCounter{}
	sc := startSidecar(t, harness.SidecarOptions{KubeTransport: counter.wrap})
	// A first cluster pays for what a sidecar does once per management
	// cluster (discovery), as a sidecar's first create after a start does.
	warm := newCluster(t, "reqwarm", "v1.33.2", 1)
	warm.create(t, sc.Driver)
	t.Cleanup(func() { deleteCluster(t, sc.Driver, warm) })

	c := newCluster(t, "reqcount", "v1.33.2", 2)
	counter.reset()
	start := time.Now()
	c.create(t, sc.Driver)
	createTook := time.Since(start)
	t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })
	_, created := counter.count()
	t.Logf("CreateCluster in %s: %s\n%s", createTook.Round(time.Millisecond), describeRequests(created), strings.Join(created, "\n"))

	c.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)
	counter.reset()
	ctx, cancel := c.callCtx()
	start = time.Now()
	_, err := sc.Driver.ResizeCluster(ctx, c.resizeRequest(3))
	cancel()
	resizeTook := time.Since(start)
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	_, resized := counter.count()
	t.Logf("ResizeCluster in %s: %s\n%s", resizeTook.Round(time.Millisecond), describeRequests(resized), strings.Join(resized, "\n"))
	_ = pb.ResizeClusterRequest{}
}

// requestKind names what a request to the API server is: discovery
// ("GET discovery", "GET openapi"), or method, resource and whether it
// names one object (GET secrets/name → "GET secrets"; "LIST secrets").
func requestKind(entry string) string {
	method, raw, _ := strings.Cut(entry, " ")
	u, err := url.Parse(raw)
	if err != nil {
		return method + " ?"
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case segs[0] == "openapi":
		return method + " openapi"
	case (segs[0] == "api" && len(segs) <= 2) || (segs[0] == "apis" && len(segs) <= 3):
		return method + " discovery"
	case segs[0] != "api" && segs[0] != "apis":
		return method + " /" + segs[0]
	}
	// /api/v1/... or /apis/g/v/...: then [namespaces/ns/]resource[/name[/sub]].
	rest := segs[2:]
	if segs[0] == "apis" {
		rest = segs[3:]
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	kind := method + " " + rest[0]
	if len(rest) == 1 && method == "GET" {
		kind = "LIST " + rest[0]
		if u.Query().Get("watch") == "true" {
			kind = "WATCH " + rest[0]
		}
	}
	if len(rest) > 2 {
		kind += "/" + rest[2]
	}
	return kind
}

// describeRequests is "N requests: kind×n, ..." sorted by kind.
func describeRequests(seen []string) string {
	counts := map[string]int{}
	for _, s := range seen {
		counts[requestKind(s)]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s×%d", k, counts[k])
	}
	return fmt.Sprintf("%d requests: %s", len(seen), strings.Join(parts, ", "))
}
