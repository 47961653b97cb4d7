package e2e

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestWriteRequestCounts pins what one CreateCluster and one
// ResizeCluster cost the management API server, counted at the sidecar's
// own client transport and grouped by kind (logged for docs/benchmarks.md):
// no API discovery and no OpenAPI schema once the sidecar has deployed
// one release on that management cluster (Helm asked both per action,
// 12 requests and most of its CPU), and at most the measured number of the
// rest. The Lease's requests are bounded apart: its renewals depend on how
// long the operation takes on a loaded machine.
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
	took := time.Since(start)
	t.Cleanup(func() { deleteCluster(t, sc.Driver, c) })
	_, created := counter.count()
	// 35 chart objects (each checked for a conflict, then created), the
	// release record (created, then marked deployed), 5 Secrets (applied),
	// the credential read, one release history read (the operation's
	// first, under the Lease: the install's and Helm's own are answered
	// from it, server/release/records.go) and 2
	// placement reads (one per management cluster). The namespace costs
	// nothing: the sidecar made it for the first cluster of the project.
	// No reachability check.
	checkWriteRequests(t, "CreateCluster", took, created, 81)

	c.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)
	counter.reset()
	ctx, cancel := c.callCtx()
	start = time.Now()
	_, err := sc.Driver.ResizeCluster(ctx, c.resizeRequest(3))
	cancel()
	took = time.Since(start)
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	_, resized := counter.count()
	// Each of the chart's 35 objects is read once
	// (server/release/concurrent_update.go; Helm 3 read each custom
	// resource twice and each typed object two or three times, 115
	// requests in all) and patched only where the patch is not empty: the
	// resized MachineDeployment, and the 10 Secrets, whose three-way patch
	// always sets the stringData the API server never returns. Then the
	// credential's read, the new record, the old one superseded, the new
	// one marked deployed and one read of the
	// release's history (the operation's first, under the Lease, which
	// the upgrade's own reads and Helm's pruning of old revisions reuse).
	checkWriteRequests(t, "ResizeCluster", took, resized, 51)
}

// checkWriteRequests fails the test if seen asks discovery or OpenAPI, or
// has more than want requests besides the Lease's, or more than 8 of
// those (acquire, release and up to 3 renewals). The watch cache's own
// requests on the same connection (watches client-go re-establishes, a
// re-list across namespaces) are not the operation's: counted apart.
func checkWriteRequests(t *testing.T, op string, took time.Duration, seen []string, want int) {
	t.Helper()
	var leases, watches, rest []string
	for _, s := range seen {
		kind := requestKind(s)
		if strings.HasSuffix(kind, " discovery") || strings.HasSuffix(kind, " openapi") {
			t.Errorf("%s asked %s: %s (discovery is shared per management cluster)", op, kind, s)
		}
		switch {
		case strings.HasPrefix(kind, "WATCH ") || (strings.HasPrefix(kind, "LIST ") && !strings.Contains(s, "/namespaces/")):
			watches = append(watches, s)
		case strings.HasSuffix(kind, " leases"):
			leases = append(leases, s)
		default:
			rest = append(rest, s)
		}
	}
	t.Logf("%s in %s: %s; the watch cache's meanwhile: %d", op, took.Round(time.Millisecond),
		describeRequests(append(rest, leases...)), len(watches))
	if len(rest) > want || len(leases) > 8 {
		t.Errorf("%s made %d requests besides the Lease's (want at most %d) and %d for the Lease (at most 8):\n%s",
			op, len(rest), want, len(leases), strings.Join(seen, "\n"))
	}
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
