package capistatus

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// gophercloudError is gophercloud's ErrUnexpectedResponseCode, which CAPO
// quotes after its own "failed to ...: ": "Expected HTTP response code
// [202 204] when accessing [DELETE https://neutron:9696/v2.0/networks/<id>],
// but got 409 instead: <the response body>". The body runs to the end of
// the JSON value (or, if it is not JSON, of the line).
var gophercloudError = regexp.MustCompile(`Expected HTTP response code \[[0-9 ]*\] when accessing \[([A-Z]+) ([^\]\s]+)\], but got ([0-9]{3}) instead(: )?`)

// rewriteAPIErrors replaces every gophercloud error in msg with
// apiError.String.
func rewriteAPIErrors(msg string) string {
	var b strings.Builder
	for {
		loc := gophercloudError.FindStringSubmatchIndex(msg)
		if loc == nil {
			return b.String() + msg
		}
		status, _ := strconv.Atoi(msg[loc[6]:loc[7]])
		e := apiError{method: msg[loc[2]:loc[3]], service: serviceOf(msg[loc[4]:loc[5]]), status: status}
		rest := msg[loc[1]:]
		if loc[8] >= 0 {
			var n int
			e.kind, e.message, n = openstackFault(rest)
			rest = rest[n:]
		}
		b.WriteString(msg[:loc[0]])
		b.WriteString(e.String())
		msg = rest
	}
}

// apiError is one refused OpenStack API call, as the tenant reads it.
type apiError struct {
	method        string
	service       service
	status        int
	kind, message string
}

// String: "the network service refused to delete the network (HTTP 409
// Conflict, NetworkInUse: There are one or more ports still in use on the
// network). <remedy>". A server error's message is the operator's (Nova's
// asks to report a bug at Launchpad and names the exception class): the
// tenant reads only that the service failed.
func (e apiError) String() string {
	if e.status >= 500 {
		return e.service.name + " failed to " + e.service.action(e.method) + " (" + httpStatus(e.status, e.kind) +
			"): retry later, and tell your cloud operator if it persists"
	}
	s := e.service.name + " refused to " + e.service.action(e.method) + " (" + httpStatus(e.status, e.kind)
	if m := strings.TrimRight(withoutIDs(oneLine(e.message)), ". "); m != "" {
		s += ": " + m
	}
	s += ")"
	if r := remedy(e); r != "" {
		s += ". " + r
	}
	return s
}

// httpStatus: "HTTP 409 Conflict, NetworkInUse". A fault type that only
// repeats the status (Nova's "forbidden" for 403) is left out.
func httpStatus(code int, kind string) string {
	text := http.StatusText(code)
	s := strings.TrimSpace("HTTP " + strconv.Itoa(code) + " " + text)
	if kind != "" && !strings.EqualFold(kind, strings.ReplaceAll(text, " ", "")) {
		s += ", " + kind
	}
	return s
}

// openstackFault reads the error body at the start of body: the fault's
// type and message in the shapes OpenStack's services answer with, and how
// many bytes of body it took. A body that is not JSON (an HTML error page
// from a proxy) is dropped to the end of its line: it is for the operator.
func openstackFault(body string) (kind, message string, n int) {
	dec := json.NewDecoder(strings.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", "", notJSON(body)
	}
	kind, message = faultOf(v)
	return kind, message, int(dec.InputOffset())
}

// notJSON is the length of a body that is not JSON: an HTML page up to its
// end, anything else to the end of its line.
func notJSON(body string) int {
	if strings.HasPrefix(body, "<") {
		// ASCII only: strings.ToLower would change the length of a body
		// that is not UTF-8, and i must index body.
		lower := []byte(body)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		if i := strings.Index(string(lower), "</html>"); i >= 0 {
			return i + len("</html>")
		}
		return len(body)
	}
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		return i
	}
	return len(body)
}

// faultOf knows the shapes of OpenStack's error bodies:
//   - Neutron: {"NeutronError": {"type": "NetworkInUse", "message": ..., "detail": ""}}
//   - Nova, Cinder: {"forbidden" | "badRequest" | "conflictingRequest" | "itemNotFound" |
//     "computeFault" | "overLimit" | ...: {"code": 403, "message": ...}}
//   - Octavia (WSME): {"faultcode": "Client", "faultstring": ..., "debuginfo": null}
//   - Keystone: {"error": {"code": 401, "title": "Unauthorized", "message": ...}}
//   - anything else with a top-level "message", "description" or "error" string.
func faultOf(v any) (kind, message string) {
	obj, _ := v.(map[string]any)
	if s, ok := obj["faultstring"].(string); ok {
		return "", s
	}
	for _, key := range []string{"message", "description", "error"} {
		if s, ok := obj[key].(string); ok {
			return "", s
		}
	}
	if len(obj) != 1 {
		return "", ""
	}
	for key, inner := range obj {
		fault, _ := inner.(map[string]any)
		message, _ = fault["message"].(string)
		switch t, _ := fault["type"].(string); {
		case t != "":
			kind = t // Neutron's
		case key == "error":
			kind, _ = fault["title"].(string) // Keystone's
		case key != "NeutronError":
			kind = key // Nova's and Cinder's
		}
	}
	return kind, message
}

// service is the OpenStack service a URL belongs to.
type service struct {
	name string // "the network service"
	path []string
	// prefixed: the path's first segment names the service (a catalogue
	// behind one host), not a resource.
	prefixed bool
}

// servicesByPath: a catalogue behind one host puts the service's type in
// the path (https://cloud/network/v2.0/...), kolla and devstack on the port.
var servicesByPath = []struct {
	name          string
	port          string
	prefix, hints []string
}{
	{"the network service", "9696", []string{"network", "networking"}, []string{"networks", "subnets", "ports", "routers", "floatingips", "security-groups", "security-group-rules", "trunks"}},
	{"the compute service", "8774", []string{"compute"}, []string{"servers", "flavors", "os-keypairs", "os-server-groups", "os-availability-zone"}},
	{"the load balancer service", "9876", []string{"load-balancer", "octavia"}, []string{"lbaas", "octavia"}},
	{"the volume service", "8776", []string{"volume", "block-storage", "volumev3"}, []string{"volumes", "snapshots", "types"}},
	{"the image service", "9292", []string{"image"}, []string{"images"}},
	{"the identity service", "5000", []string{"identity"}, []string{"auth", "users", "projects", "application_credentials", "OS-TRUST"}},
}

// serviceOf names the service of an OpenStack API URL: by its path's
// first segment, its port, then a collection only that service has.
func serviceOf(raw string) service {
	u, err := url.Parse(raw)
	if err != nil {
		return service{name: "a remote service"}
	}
	path := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	for _, s := range servicesByPath {
		if len(path) > 0 && contains(s.prefix, path[0]) {
			return service{name: s.name, path: path, prefixed: true}
		}
		if u.Port() == s.port {
			return service{name: s.name, path: path}
		}
	}
	for _, s := range servicesByPath {
		for _, seg := range path {
			if contains(s.hints, seg) {
				return service{name: s.name, path: path}
			}
		}
	}
	// CAPI's probes and clients quote the cluster's own API server.
	if u.Port() == "6443" || len(path) > 0 && contains([]string{"api", "apis", "healthz", "livez", "readyz", "version"}, path[0]) {
		return service{name: "the cluster's Kubernetes API", path: path}
	}
	return service{name: "a remote service", path: path}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// action is what the call did, from its method and path: "delete a
// network", "create a server", "update the router".
func (s service) action(method string) string {
	resource, endsWithID, tail := "", false, ""
	path := s.path
	if len(path) > 0 && s.prefixed {
		path = path[1:]
	}
	prev := ""
	for i, seg := range path {
		// An id: UUID-like, or any name after a collection ("networks/<id>";
		// "lbaas/loadbalancers" is two names).
		id := idLike.MatchString(seg) || strings.HasSuffix(prev, "s") && !strings.HasSuffix(seg, "s")
		if !version.MatchString(seg) {
			prev = seg
		}
		switch {
		case version.MatchString(seg):
		case id:
			endsWithID = true
			prev = ""
		case endsWithID && resource != "" && i == len(path)-1:
			// A sub-action: /servers/<id>/action, /routers/<id>/add_router_interface.
			tail = seg
		default:
			resource, endsWithID = singular(seg), false
		}
	}
	if resource == "" {
		resource = "a resource"
	} else if endsWithID || tail != "" {
		resource = "the " + resource
	} else {
		resource = article(resource) + " " + resource
	}
	if tail != "" {
		return "perform " + strings.NewReplacer("_", " ", "-", " ").Replace(tail) + " on " + resource
	}
	verbs := map[string]string{"POST": "create", "PUT": "update", "PATCH": "update", "DELETE": "delete", "GET": "read", "HEAD": "read"}
	verb, ok := verbs[method]
	if !ok {
		verb = strings.ToLower(method)
	}
	return verb + " " + resource
}

var (
	version = regexp.MustCompile(`^v[0-9]+(\.[0-9]+)?$`)
	// An id: a UUID, or any segment of 16 or more with a digit in it.
	idLike = regexp.MustCompile(`^(` + uuid + `|[0-9a-fA-F]{8,}|(?:[A-Za-z_.-]*[0-9][A-Za-z0-9_.-]*){16,})$`)
)

// singulars are the collections whose singular is not the name without "s".
var singulars = map[string]string{
	"floatingips": "floating IP", "security-groups": "security group", "security-group-rules": "security group rule",
	"os-keypairs": "key pair", "os-server-groups": "server group", "loadbalancers": "load balancer",
	"members": "pool member", "healthmonitors": "health monitor", "application_credentials": "application credential",
	"policies": "policy", "types": "volume type", "os-volume_attachments": "volume attachment",
}

func singular(seg string) string {
	if s, ok := singulars[seg]; ok {
		return s
	}
	s := strings.NewReplacer("_", " ", "-", " ").Replace(strings.TrimPrefix(seg, "os-"))
	return strings.TrimSuffix(s, "s")
}

func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return "an"
	}
	return "a"
}

// quotaNames finds the quota an OpenStack error names, in the wording of
// Nova, Neutron, Octavia and Cinder.
var quotaNames = []*regexp.Regexp{
	regexp.MustCompile(`Quota exceeded for resources: \[([^\]]*)\]`),              // Neutron: ['port']
	regexp.MustCompile(`Quota has been met for resources?: ([A-Za-z ]*[A-Za-z])`), // Octavia: Load Balancer
	regexp.MustCompile(`exceeded for quota '([^']+)'`),                            // Cinder: 'volumes'
	regexp.MustCompile(`exceeds allowed (\w+) quota`),                             // Cinder: gigabytes
	regexp.MustCompile(`Quota exceeded for ([a-z_ ]*[a-z]):`),                     // Nova: instances, cores, ram
}

// remedy is what the tenant can do about a failure with a known remedy, or "".
func remedy(e apiError) string {
	if e.kind == "NetworkInUse" && e.method == "DELETE" {
		return "Ports are still in use on the cluster's network: delete the load balancers, servers and ports you created in it, then delete the cluster again"
	}
	if !(strings.Contains(strings.ToLower(e.message), "quota") || e.kind == "OverQuota" || e.kind == "overLimit" || e.status == http.StatusRequestEntityTooLarge) {
		return ""
	}
	for _, re := range quotaNames {
		if m := re.FindStringSubmatch(e.message); m != nil {
			name := strings.ToLower(strings.NewReplacer("'", "", `"`, "").Replace(m[1]))
			return "The project's " + name + " quota is used up: delete what you no longer use, or ask your cloud operator to raise the quota"
		}
	}
	return "A quota of the project is used up: delete what you no longer use, or ask your cloud operator to raise the quota"
}
