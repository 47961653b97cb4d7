package helmvalues

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// valueType is the typed parser of one kind of label value. parse returns the
// normalized value (bool, int, string or []string) or, on failure, a
// description of what is expected.
type valueType struct {
	Doc   string
	parse func(raw string) (value any, expected string)
}

// boolType accepts what oslo's strutils.bool_from_string accepts, in any
// case, as the StackHPC driver does; anything else is an error, not a silent
// default.
var boolType = valueType{
	Doc: "boolean: true/false, yes/no, on/off, 1/0, t/f, y/n (any case)",
	parse: func(raw string) (any, string) {
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "1", "t", "true", "on", "y", "yes":
			return true, ""
		case "0", "f", "false", "off", "n", "no":
			return false, ""
		}
		return nil, "a boolean (true/false, yes/no, on/off, 1/0)"
	},
}

func intType(min, max int) valueType {
	doc := fmt.Sprintf("integer %d–%d", min, max)
	return valueType{
		Doc: doc,
		parse: func(raw string) (any, string) {
			n, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil || n < min || n > max {
				return nil, "an " + doc
			}
			return n, ""
		},
	}
}

// enumType accepts one of values, case-insensitively, and returns it in the
// spelling listed.
func enumType(values ...string) valueType {
	doc := "one of " + strings.Join(values, ", ")
	return valueType{
		Doc: doc,
		parse: func(raw string) (any, string) {
			raw = strings.TrimSpace(raw)
			for _, v := range values {
				if strings.EqualFold(raw, v) {
					return v, ""
				}
			}
			return nil, doc
		},
	}
}

// stringType is a free-form string checked by check, which returns "" when
// the value is acceptable and what is expected otherwise.
func stringType(doc string, check func(string) string) valueType {
	return valueType{
		Doc: doc,
		parse: func(raw string) (any, string) {
			raw = strings.TrimSpace(raw)
			if msg := check(raw); msg != "" {
				return nil, msg
			}
			return raw, ""
		},
	}
}

func patternType(doc string, pattern *regexp.Regexp, maxLen int) valueType {
	return stringType(doc, func(s string) string {
		if len(s) > maxLen || !pattern.MatchString(s) {
			return doc
		}
		return ""
	})
}

var cidrType = valueType{
	Doc: "CIDR (IPv4 or IPv6 network, e.g. 10.0.0.0/24)",
	parse: func(raw string) (any, string) {
		prefix, msg := parseCIDR(strings.TrimSpace(raw))
		if msg != "" {
			return nil, msg
		}
		return prefix.String(), ""
	},
}

// cidrOrIPType accepts a CIDR or a single address, which becomes a /32 or
// /128 network (Octavia's allowed_cidrs wants networks).
var cidrOrIPType = valueType{
	Doc: "CIDR or IP address",
	parse: func(raw string) (any, string) {
		raw = strings.TrimSpace(raw)
		if addr, err := netip.ParseAddr(raw); err == nil && addr.Zone() == "" {
			return netip.PrefixFrom(addr, addr.BitLen()).String(), ""
		}
		prefix, msg := parseCIDR(raw)
		if msg != "" {
			return nil, "a CIDR or IP address (" + msg + ")"
		}
		return prefix.String(), ""
	},
}

var semverType = valueType{
	Doc: "semantic version (e.g. 0.27.0)",
	parse: func(raw string) (any, string) {
		raw = strings.TrimSpace(raw)
		if _, ok := parseSemver(raw); !ok {
			return nil, "a semantic version such as " + ChartVersion + " (no leading v)"
		}
		return raw, ""
	},
}

// maxListItems bounds list labels; no real list comes close.
const maxListItems = 64

// listType splits on sep, trims the items, drops empty ones and parses each
// with elem. The result is a []string in the given order, duplicates removed.
func listType(sep string, elem valueType) valueType {
	sepDoc := "comma-separated"
	if sep == " " {
		sepDoc = "space-separated"
	}
	doc := sepDoc + " list of " + elem.Doc
	return valueType{
		Doc: doc,
		parse: func(raw string) (any, string) {
			var items []string
			if sep == " " {
				items = strings.Fields(raw)
			} else {
				items = strings.Split(raw, sep)
			}
			out := make([]string, 0, len(items))
			seen := map[string]bool{}
			for _, item := range items {
				item = strings.TrimSpace(item)
				if item == "" {
					continue
				}
				v, msg := elem.parse(item)
				if msg != "" {
					return nil, fmt.Sprintf("a %s; item %q is not %s", doc, item, msg)
				}
				s, _ := v.(string)
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
			if len(out) > maxListItems {
				return nil, fmt.Sprintf("a %s of at most %d items", doc, maxListItems)
			}
			if len(out) == 0 {
				return nil, "a non-empty " + doc
			}
			return out, ""
		},
	}
}

// Element and string types used by the registry.
var (
	chartNameType = stringType("plain name", func(s string) string { return checkChartScalar(s) })
	idType        = stringType("OpenStack id (UUID)", checkID)

	octaviaProviderType = patternType("Octavia provider name (lowercase letters, digits, '-', '_')",
		regexp.MustCompile(`^[a-z][a-z0-9_-]*$`), 64)
	fstypeType = patternType("filesystem type (e.g. ext4, xfs)",
		regexp.MustCompile(`^[a-z][a-z0-9]*$`), 32)
	claimType = patternType("OIDC claim name (letters, digits, '_', '-', '.', ':', '/')",
		regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`), 255)
	prefixType = patternType("prefix (letters, digits, '_', '-', '.', ':', '/', '@')",
		regexp.MustCompile(`^[A-Za-z0-9_.:/@-]+$`), 255)
	clientIDType = patternType("OIDC client id (letters, digits, '_', '-', '.', ':', '/', '@', '+')",
		regexp.MustCompile(`^[A-Za-z0-9_.:/@+-]+$`), 255)
	admissionPluginType = patternType("admission plugin name (e.g. NodeRestriction)",
		regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`), 64)
	signingAlgType = enumType("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")

	httpsURLType = stringType("https URL", func(s string) string { return checkURL(s, []string{"https"}) })

	dnsDomainType = stringType("DNS domain (lowercase, e.g. cluster.local)", func(s string) string {
		if !isDNSSubdomain(s) {
			return "a lowercase DNS domain such as cluster.local"
		}
		return ""
	})

	certSANType = stringType("DNS name (wildcard allowed) or IP address", func(s string) string {
		if _, err := netip.ParseAddr(s); err == nil {
			return ""
		}
		if isHostname(s, true) {
			return ""
		}
		return "a DNS name or IP address"
	})

	networkNameType = stringType("Neutron network name", func(s string) string { return checkChartScalar(s) })

	registryPrefixType = stringType("registry prefix host[:port][/path]", func(s string) string {
		_, _, msg := parseRegistryPrefix(s)
		return msg
	})
)

var repoPathComponent = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*$`)

// parseRegistryPrefix splits "registry.example.com:5000/magnum/" into host
// and path, as container_infra_prefix is written in Magnum templates.
func parseRegistryPrefix(s string) (host, path, expected string) {
	const doc = "a registry prefix host[:port][/path], e.g. registry.example.com:5000/magnum/"
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if strings.Contains(s, "://") {
		return "", "", doc + " (without a scheme)"
	}
	host, path, _ = strings.Cut(s, "/")
	if msg := checkRegistryHost(host); msg != "" {
		return "", "", doc
	}
	if path != "" {
		for _, part := range strings.Split(path, "/") {
			if !repoPathComponent.MatchString(part) {
				return "", "", doc
			}
		}
	}
	return host, path, ""
}
