package capistatus

import (
	"regexp"
	"strings"
)

// tenantText is a controller's message (a CAPI or CAPO condition, a
// failureMessage, an addon's failure) as a tenant may read it in
// status_reason and health_status_reason: on one line; an OpenStack API
// error that gophercloud quoted whole (the URL it called, the JSON body)
// reduced to the service, the action, the HTTP status and what OpenStack
// said, with the remedy where the failure has a known one; any other URL
// replaced by the service it points to; ids (UUIDs, provider IDs) replaced
// by what they name. The operator's log keeps the original (Rewritten, and
// the sidecar logs it with the request id).
//
// Kubernetes kinds and object names the derivation itself writes around
// these messages ("OpenStackCluster <stack_id>: ...", "machine
// <stack_id>-default-worker-...") are kept on purpose: the names start with
// the cluster's stack_id, which `openstack coe cluster show` prints, and a
// machine's name is its Nova server's name in `openstack server list`, so
// they are how a tenant finds the thing; the kind tells an operator the
// tenant asks for help where to look. Only ids the tenant cannot map to
// anything they see (a Neutron network's UUID, a provider ID) are removed.
func tenantText(msg string) string {
	s := msg
	if strings.Contains(s, "Expected HTTP response code") {
		s = rewriteAPIErrors(s)
	}
	s = oneLine(s)
	// Most messages hold none of this ("Scaling up control plane..."): each
	// pass runs only when its marker is there, which keeps a status poll
	// that quotes dozens of conditions cheap.
	if strings.Contains(s, "openstack://") {
		s = providerIDNode.ReplaceAllString(s, "the server's Kubernetes node")
		s = providerID.ReplaceAllString(s, "the server")
	}
	if strings.Contains(s, "://") {
		s = urlError.ReplaceAllStringFunc(s, func(m string) string {
			return "calling " + serviceOf(urlError.FindStringSubmatch(m)[1]).name + ": "
		})
		s = chartRepository.ReplaceAllString(s, "the chart repository${1}")
		s = anyURL.ReplaceAllStringFunc(s, func(u string) string { return serviceOf(strings.Trim(u, `"`)).name })
	}
	if strings.Contains(s, "tcp ") || strings.Contains(s, "udp ") {
		s = socket.ReplaceAllString(s, "$1 $2")
	}
	if strings.Contains(s, "lookup ") {
		s = lookup.ReplaceAllString(s, "lookup")
	}
	return withoutIDs(s)
}

// TenantText is tenantText for the sidecar's own errors that reach
// status_reason (a failed cleanup after deletion): the same rewriting, so a
// URL or id in them reads as what it names.
func TenantText(msg string) string { return tenantText(msg) }

// Rewritten lists the messages of the snapshot's objects that tenantText
// changes, verbatim (on one line) and each once: what status_reason quoted
// in a tenant's words, for the operator's log.
func Rewritten(snap Snapshot) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range snapshotMessages(snap) {
		if m = strings.TrimSpace(m); m == "" || seen[m] {
			continue
		}
		seen[m] = true
		if line := oneLine(m); tenantText(m) != line {
			out = append(out, line)
		}
	}
	return out
}

// idNouns are the OpenStack resources a message names by id.
const idNouns = `(?i:load ?balancer|floating ?ip|security group|server group|volume type|network|subnet|port|router|` +
	`server|instance|volume|snapshot|image|flavor|listener|pool|member|keypair|project|trunk)`

var (
	// CAPI's MachineNodeHealthy message before the node registers.
	providerIDNode = regexp.MustCompile(`a Node with spec\.providerID \S+`)
	// CAPO's provider IDs: openstack:///<server id>, openstack://<region>/<id>.
	providerID = regexp.MustCompile(`openstack://[^\s/]*/[0-9A-Za-z-]+`)
	// Go's url.Error: `Post "https://keystone:5000/v3/auth/tokens": <cause>`.
	urlError = regexp.MustCompile(`\b(?:Get|Post|Put|Patch|Delete|Head) "(https?://[^"\s]+)": `)
	// Helm's errors about an addon's chart: `chart "x" version "1" not found
	// in https://charts.example/repo repository`, `looks like
	// "https://charts.example/repo" is not a valid chart repository`.
	chartRepository = regexp.MustCompile(`"?https?://[^\s"]+"?(?: repository|( is not a valid chart repository))`)
	// Trailing punctuation is not part of a URL; Go's url.Error quotes it.
	anyURL = regexp.MustCompile(`"?https?://[^\s"'\]\[,;()]*[^\s"'\]\[,;().:]"?`)
	// Go's net errors name addresses: "dial tcp 10.0.0.5:5000: connect:
	// connection refused", "read tcp 10.0.0.1:4242->10.0.0.5:5000: ...",
	// "lookup keystone.example.test on 127.0.0.53:53: no such host".
	socket = regexp.MustCompile(`\b(dial|read|write) (tcp|udp) ` + address + `(?:->` + address + `)?`)
	lookup = regexp.MustCompile(`\blookup [A-Za-z0-9.-]+(?: on ` + address + `)?`)
	// A host or IP with an optional port, without the ": " that follows.
	address = `[0-9A-Za-z.:\[\]-]*[0-9A-Za-z\]]`
	uuid    = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
	// "network <uuid>", "Instance <uuid>", "load balancer <uuid>": the
	// noun stays, as "the network".
	nounAndID = regexp.MustCompile(`\b(?:([Tt]he|[Aa]n?) )?(` + idNouns + `) ` + uuid + `\b`)
	bareID    = regexp.MustCompile(`\b` + uuid + `\b`)
)

// withoutIDs replaces "<noun> <uuid>" with "the <noun>" ("Unable to complete
// operation on network <uuid>" → "... on the network") and any other UUID
// with "an OpenStack resource".
func withoutIDs(s string) string {
	if !bareID.MatchString(s) {
		return s
	}
	s = nounAndID.ReplaceAllStringFunc(s, func(m string) string {
		sub := nounAndID.FindStringSubmatch(m)
		article, noun := sub[1], sub[2]
		switch {
		case article != "":
			return article + " " + noun
		case noun[0] >= 'A' && noun[0] <= 'Z' && noun[1] >= 'a' && noun[1] <= 'z':
			// The start of a sentence: "Instance <id> could not be found".
			return "The " + strings.ToLower(noun)
		}
		return "the " + noun
	})
	return bareID.ReplaceAllString(s, "an OpenStack resource")
}
