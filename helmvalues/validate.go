package helmvalues

import (
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Validators for strings that end up in the values. The chart inserts many
// values into its templates without quoting them ("flavor: {{ . }}"), and the
// addon provider renders addon values and manifests as Jinja2, so a value is
// only safe if it stays one plain YAML string and carries no template syntax.

// hasTemplateDelimiters reports Go-template or Jinja2 openers: "{{" (both),
// "{%" and "{#" (Jinja2).
func hasTemplateDelimiters(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

// hasControl reports control characters, line or paragraph separators and
// invalid UTF-8: none of them belongs in a single-line value.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
			return true
		}
	}
	return false
}

// yamlIndicators are characters that can turn an unquoted scalar into YAML
// structure, a comment, an alias, a tag or a block scalar, plus the Jinja and
// Go template braces and '%' (Jinja statements, systemd specifiers).
const yamlIndicators = "{}[]\"'`#&*!|>%\\,"

const chartScalarExpected = "a plain name: no quotes, braces, brackets, ',', '#', '%', '&', '*', '!', '|', '>', '\\', control characters or surrounding spaces, and not something YAML reads as a number, boolean or null"

// checkChartScalar returns "" if s can be inserted unquoted into a YAML
// template and read back as the same string, else what is expected. The YAML
// library Helm itself uses is the oracle for the last step, so "2", "yes",
// "null", "1e3" and "a: b" are all refused.
func checkChartScalar(s string) string {
	if s == "" || len(s) > 255 || hasControl(s) || hasTemplateDelimiters(s) ||
		strings.ContainsAny(s, yamlIndicators) || strings.TrimSpace(s) != s {
		return chartScalarExpected
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte("v: "+s), &doc); err != nil {
		return chartScalarExpected
	}
	if got, ok := doc["v"].(string); !ok || got != s {
		return chartScalarExpected
	}
	return ""
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// checkID validates an OpenStack resource id (usually a UUID).
func checkID(s string) string {
	if !idPattern.MatchString(s) || len(s) > 255 || checkChartScalar(s) != "" {
		return "an OpenStack id (letters, digits, '-', '_', '.'; not a bare number)"
	}
	return ""
}

var dnsLabelPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// isDNSLabel is Kubernetes' RFC 1123 label: lowercase, ≤ 63 characters.
func isDNSLabel(s string) bool {
	return len(s) <= 63 && dnsLabelPattern.MatchString(s)
}

// isDNSSubdomain is Kubernetes' RFC 1123 subdomain: dot-separated labels
// (Kubernetes does not limit their length), ≤ 253 characters in all.
func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !dnsLabelPattern.MatchString(part) {
			return false
		}
	}
	return true
}

// isHostname accepts a DNS name in any case (DNS is case-insensitive), with
// an optional leading "*." wildcard when wildcard is true.
func isHostname(s string, wildcard bool) bool {
	if wildcard {
		s = strings.TrimPrefix(s, "*.")
	}
	return isDNSSubdomain(strings.ToLower(s))
}

var qualifiedNamePattern = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)

// isQualifiedName is a Kubernetes label or taint key: an optional DNS
// subdomain prefix and "/", then a name of ≤ 63 characters.
func isQualifiedName(s string) bool {
	prefix, name, found := strings.Cut(s, "/")
	if !found {
		name, prefix = prefix, ""
	} else if !isDNSSubdomain(prefix) {
		return false
	}
	return len(name) <= 63 && qualifiedNamePattern.MatchString(name)
}

// isLabelValue is a Kubernetes label (or taint) value: empty or a name of
// ≤ 63 characters.
func isLabelValue(s string) bool {
	return s == "" || (len(s) <= 63 && qualifiedNamePattern.MatchString(s))
}

// checkURL validates a URL that is written into files and values verbatim.
func checkURL(s string, schemes []string) string {
	expected := "an " + strings.Join(schemes, " or ") + " URL without spaces, quotes, braces or backslashes"
	if s == "" || len(s) > 2048 || hasControl(s) || hasTemplateDelimiters(s) || strings.ContainsAny(s, " \"'`{}\\<>^|") {
		return expected
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" || u.Fragment != "" {
		return expected
	}
	for _, scheme := range schemes {
		if u.Scheme == scheme {
			return ""
		}
	}
	return expected
}

// checkRegistryHost validates a container registry host, "host[:port]".
func checkRegistryHost(s string) string {
	host, port, hasPort := strings.Cut(s, ":")
	if strings.HasPrefix(s, "[") { // IPv6 literal
		end := strings.Index(s, "]")
		if end < 0 {
			return "a DNS name or IP, optionally with :port"
		}
		host, port, hasPort = s[1:end], strings.TrimPrefix(s[end+1:], ":"), len(s) > end+1
		if _, err := netip.ParseAddr(host); err != nil {
			return "a DNS name or IP, optionally with :port"
		}
	} else if _, err := netip.ParseAddr(host); err != nil && !isDNSSubdomain(host) {
		return "a lowercase DNS name or IP, optionally with :port"
	}
	if hasPort {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "a port between 1 and 65535"
		}
	}
	return ""
}

// parseCIDR accepts a network in canonical form: "10.0.0.0/24", not
// "10.0.0.5/24" (Neutron and Kubernetes want the network address).
func parseCIDR(s string) (netip.Prefix, string) {
	prefix, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, "a CIDR such as 10.0.0.0/24"
	}
	if prefix.Masked() != prefix {
		return netip.Prefix{}, "a CIDR whose address is the network address (" + prefix.Masked().String() + ")"
	}
	return prefix, ""
}

var semverPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})` +
	`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
	`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

type semver struct {
	major, minor, patch int
}

// parseSemver accepts a SemVer 2.0 version without a leading "v".
func parseSemver(s string) (semver, bool) {
	m := semverPattern.FindStringSubmatch(s)
	if m == nil || len(s) > 128 {
		return semver{}, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	return semver{major, minor, patch}, true
}
