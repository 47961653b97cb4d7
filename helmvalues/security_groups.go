package helmvalues

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// extra_security_group_rules: ingress rules added to the security group CAPO
// manages for worker nodes. Only ingress from a CIDR to a protocol and port
// range: no egress, no remote groups, no other projects' objects. Chart 0.27
// fails to render any controlPlaneNodesSecurityGroupRules, so the control
// plane gets none.

// securityGroupRule is one parsed rule.
type securityGroupRule struct {
	Protocol string // tcp, udp, sctp or icmp
	PortMin  int    // 0 for icmp
	PortMax  int
	CIDR     string // normalized network
}

const securityGroupRuleDoc = "protocol:ports:cidr items: protocol tcp, udp, sctp or icmp; ports a port or a range " +
	"low-high (1–65535; empty for icmp); cidr an IPv4 or IPv6 network, e.g. tcp:30000-32767:0.0.0.0/0"

var securityGroupRulesType = valueType{
	Doc: "comma-separated " + securityGroupRuleDoc,
	parse: func(raw string) (any, string) {
		var rules []securityGroupRule
		seen := map[securityGroupRule]bool{}
		for _, item := range splitItems(raw) {
			rule, expected := parseSecurityGroupRule(item)
			if expected != "" {
				return nil, fmt.Sprintf("comma-separated protocol:ports:cidr rules; rule %q is not %s", item, expected)
			}
			if !seen[rule] {
				seen[rule] = true
				rules = append(rules, rule)
			}
		}
		switch {
		case len(rules) == 0:
			return nil, "a non-empty list of " + securityGroupRuleDoc
		case len(rules) > 32:
			return nil, "at most 32 rules"
		}
		return rules, ""
	},
}

// parseSecurityGroupRule parses "tcp:443:10.0.0.0/8" (an IPv6 network keeps
// its colons: only the first two separate the parts).
func parseSecurityGroupRule(item string) (securityGroupRule, string) {
	parts := strings.SplitN(item, ":", 3)
	if len(parts) != 3 {
		return securityGroupRule{}, "protocol:ports:cidr"
	}
	protocol, ports, cidr := strings.ToLower(strings.TrimSpace(parts[0])), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])
	rule := securityGroupRule{Protocol: protocol}
	switch protocol {
	case "tcp", "udp", "sctp":
		low, high, ok := parsePortRange(ports)
		if !ok {
			return securityGroupRule{}, "a rule with a port or a port range low-high between 1 and 65535"
		}
		rule.PortMin, rule.PortMax = low, high
	case "icmp":
		if ports != "" {
			return securityGroupRule{}, "an icmp rule without ports (icmp::cidr)"
		}
	default:
		return securityGroupRule{}, "a rule for tcp, udp, sctp or icmp"
	}
	prefix, msg := parseCIDR(cidr)
	if msg != "" {
		return securityGroupRule{}, "a rule whose source is " + msg
	}
	rule.CIDR = prefix.String()
	return rule, ""
}

func parsePortRange(s string) (low, high int, ok bool) {
	lowText, highText, isRange := strings.Cut(s, "-")
	if !isRange {
		highText = lowText
	}
	low, err1 := strconv.Atoi(lowText)
	high, err2 := strconv.Atoi(highText)
	if err1 != nil || err2 != nil || low < 1 || high > 65535 || low > high {
		return 0, 0, false
	}
	return low, high, true
}

// value is the rule as CAPO's SecurityGroupRuleSpec, named after what it
// opens so that rules stay unique and readable in Neutron.
func (r securityGroupRule) value() map[string]any {
	etherType := "IPv4"
	if netip.MustParsePrefix(r.CIDR).Addr().Is6() {
		etherType = "IPv6"
	}
	name := "extra " + r.Protocol
	if r.PortMax > 0 {
		name += " " + strings.Split(r.String(), ":")[1]
	}
	rule := map[string]any{
		"name":           name + " from " + r.CIDR,
		"description":    "label extra_security_group_rules",
		"direction":      "ingress",
		"etherType":      etherType,
		"protocol":       r.Protocol,
		"remoteIPPrefix": r.CIDR,
	}
	if r.PortMax > 0 {
		rule["portRangeMin"] = r.PortMin
		rule["portRangeMax"] = r.PortMax
	}
	return rule
}

// securityGroupRules maps extra_security_group_rules to the worker nodes'
// security group rules.
func (b *builder) securityGroupRules() {
	rules, _ := b.labels.values["extra_security_group_rules"].([]securityGroupRule)
	if len(rules) == 0 {
		return
	}
	list := make([]any, len(rules))
	for i, r := range rules {
		list[i] = r.value()
	}
	put(b.values, list, "clusterNetworking", "workerNodesSecurityGroupRules")
}

// String is the rule as the label writes it.
func (r securityGroupRule) String() string {
	ports := ""
	if r.PortMax > 0 {
		ports = strconv.Itoa(r.PortMin)
		if r.PortMax != r.PortMin {
			ports += "-" + strconv.Itoa(r.PortMax)
		}
	}
	return r.Protocol + ":" + ports + ":" + r.CIDR
}
