package capistatus

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// tenantSample is one controller message and what a tenant reads of it
// (testdata/tenant-text/messages.json; "source" says where each came from).
type tenantSample struct {
	Name    string `json:"name"`
	Source  string `json:"source"`
	Message string `json:"message"`
	Want    string `json:"want"`
}

const tenantSamples = "testdata/tenant-text/messages.json"

func loadTenantSamples(tb testing.TB) []tenantSample {
	tb.Helper()
	raw, err := os.ReadFile(tenantSamples)
	if err != nil {
		tb.Fatal(err)
	}
	var samples []tenantSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		tb.Fatal(err)
	}
	return samples
}

// What no tenant text may hold: a URL, a UUID, a provider ID, an IP
// address or a host name of the samples.
var leaks = regexp.MustCompile(`https?://|openstack://|` + uuid + `|\b\d+\.\d+\.\d+\.\d+\b|example\.test|[{}]`)

func TestTenantText(t *testing.T) {
	samples := loadTenantSamples(t)
	for i, s := range samples {
		got := tenantText(s.Message)
		if *updateRecorded {
			samples[i].Want = got
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			if got != s.Want {
				t.Errorf("tenantText(%q)\n got  %q\n want %q", s.Message, got, s.Want)
			}
			if l := leaks.FindString(got); l != "" {
				t.Errorf("tenant text %q still holds %q", got, l)
			}
			if again := tenantText(got); again != got {
				t.Errorf("not idempotent: %q became %q", got, again)
			}
		})
	}
	if *updateRecorded {
		out, _ := json.MarshalIndent(samples, "", " ")
		if err := os.WriteFile(tenantSamples, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The remedies a tenant can act on, by failure.
func TestTenantTextRemedies(t *testing.T) {
	for _, c := range []struct{ message, want string }{
		{`Expected HTTP response code [202 204] when accessing [DELETE https://n:9696/v2.0/networks/x], but got 409 instead: {"NeutronError": {"type": "NetworkInUse", "message": "m", "detail": ""}}`,
			"delete the load balancers, servers and ports you created in it, then delete the cluster again"},
		// The same refusal on create is not the stuck deletion.
		{`Expected HTTP response code [201] when accessing [POST https://n:9696/v2.0/ports], but got 409 instead: {"NeutronError": {"type": "NetworkInUse", "message": "m", "detail": ""}}`,
			"(HTTP 409 Conflict, NetworkInUse: m)"},
		{`Expected HTTP response code [202] when accessing [POST https://nova:8774/v2.1/servers], but got 403 instead: {"forbidden": {"code": 403, "message": "Quota exceeded for cores: Requested 8, but already used 16 of 20 cores"}}`,
			"The project's cores quota is used up"},
		{`Expected HTTP response code [202] when accessing [POST https://cinder:8776/v3/p/volumes], but got 413 instead: {"overLimit": {"code": 413, "message": "VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 100G, quota is 1000G and 950G has been consumed."}}`,
			"The project's gigabytes quota is used up"},
		{`Expected HTTP response code [201] when accessing [POST https://o:9876/v2.0/lbaas/listeners], but got 403 instead: {"faultcode": "Client", "faultstring": "Quota has been met for resources: Listener", "debuginfo": null}`,
			"The project's listener quota is used up"},
		{`Expected HTTP response code [201] when accessing [POST https://o/network/v2.0/floatingips], but got 409 instead: {"NeutronError": {"type": "OverQuota", "message": "over", "detail": ""}}`,
			"A quota of the project is used up"},
	} {
		if got := tenantText(c.message); !strings.Contains(got, c.want) {
			t.Errorf("tenantText(%q) = %q, want it to hold %q", c.message, got, c.want)
		}
	}
}

// Rewritten keeps, for the operator, exactly the messages tenantText changed.
func TestRewritten(t *testing.T) {
	failing := `failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron:9696/v2.0/networks/7c1e], but got 409 instead`
	snap := Snapshot{InfraCluster: &OpenStackCluster{Status: OpenStackClusterStatus{FailureMessage: &failing}},
		Addons: []Addon{{Name: "a", FailureMessage: "chart not found"}, {Name: "b", FailureMessage: failing}}}
	got := Rewritten(snap)
	if len(got) != 1 || got[0] != failing {
		t.Errorf("Rewritten = %q, want only %q", got, failing)
	}
}

// FuzzTenantText: any controller message, however malformed its URL or
// body, is rewritten without panicking, the same way every time, on one
// line, and without a whole http(s) URL or UUID left in it.
func FuzzTenantText(f *testing.F) {
	samples := loadTenantSamples(f)
	for _, s := range samples {
		f.Add(s.Message)
	}
	f.Add(`Expected HTTP response code [] when accessing [X https://], but got 999 instead: {"a":`)
	fullURL := regexp.MustCompile(`https?://[A-Za-z0-9.-]+\.[a-z]+[:/]\S*`)
	f.Fuzz(func(t *testing.T, msg string) {
		got := tenantText(msg)
		if again := tenantText(msg); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		if strings.Contains(got, "\n") {
			t.Fatalf("%q has a line break", got)
		}
		if u := fullURL.FindString(got); u != "" && fullURL.MatchString(msg) && !strings.ContainsAny(msg, "\x00") {
			// A URL the input spelled out in the usual way must not survive.
			if strings.Contains(msg, u) {
				t.Fatalf("tenantText(%q) = %q still holds %q", msg, got, u)
			}
		}
	})
}

// BenchmarkTenantText: what rewriting costs per quoted message next to
// oneLine, which quoting did before (same samples, same run).
func BenchmarkTenantText(b *testing.B) {
	samples := loadTenantSamples(b)
	for _, bc := range []struct {
		name string
		fn   func(string) string
	}{{"oneLine", oneLine}, {"tenantText", tenantText}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for _, s := range samples {
					bc.fn(s.Message)
				}
			}
		})
	}
}
