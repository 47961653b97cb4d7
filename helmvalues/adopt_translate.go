package helmvalues

import (
	"fmt"
	"sort"
)

// translate rewrites, in place, the keys of another driver's values that
// the chart at chartVersion ignores or reads under a newer name, and returns
// a note for each. Every translation keeps what the chart renders for the
// machines (TestAdoptKeepsMachineTemplates renders both through the test
// chart); each applies only from the chart version where the old key stopped
// working, since before it the old key is the one the chart reads. An
// unparsable chart version gets only the translations valid for every
// version.
func translate(values map[string]any, chartVersion string) []string {
	v, known := parseSemver(chartVersion)
	from := func(minor int) bool { return known && (v.major > 0 || v.minor >= minor) }
	var notes []string
	if from(20) {
		notes = append(notes, dropDashboard(values)...)
	}
	if from(24) {
		notes = append(notes, renameAllowedCIDRs(values)...)
	}
	if from(27) {
		notes = append(notes, moveDNSNameservers(values)...)
	}
	notes = append(notes, autoscaleBooleans(values)...)
	return notes
}

// dropDashboard removes addons.kubernetesDashboard: chart 0.20.0 removed the
// dashboard addon (azimuth-cloud/capi-helm-charts a5a975ca) and ignores the
// key, which the StackHPC driver still sends.
func dropDashboard(values map[string]any) []string {
	addons, _ := values["addons"].(map[string]any)
	if _, ok := addons["kubernetesDashboard"]; !ok {
		return nil
	}
	delete(addons, "kubernetesDashboard")
	return []string{"addons.kubernetesDashboard is dropped: the chart has had no dashboard addon since 0.20 and ignored it"}
}

// renameAllowedCIDRs moves apiServer.allowedCidrs (the StackHPC spelling,
// from the label api_master_lb_allowed_cidrs) to apiServer.allowedCIDRs,
// which chart 0.24.0 reads instead (capi-helm-charts eac90cd6). This one
// changes behaviour on purpose: the API load balancer starts enforcing the
// CIDRs the label asked for, which the old key never did. No machine
// template reads it.
func renameAllowedCIDRs(values map[string]any) []string {
	api, _ := values["apiServer"].(map[string]any)
	old, ok := api["allowedCidrs"]
	if !ok {
		return nil
	}
	delete(api, "allowedCidrs")
	if isEmpty(old) {
		return []string{"apiServer.allowedCidrs (empty) is dropped"}
	}
	if cur, set := api["allowedCIDRs"]; set && !isEmpty(cur) {
		return []string{"apiServer.allowedCidrs is dropped: apiServer.allowedCIDRs is set and wins"}
	}
	api["allowedCIDRs"] = old
	return []string{fmt.Sprintf(
		"apiServer.allowedCidrs becomes apiServer.allowedCIDRs: the chart ignored the old spelling, so the API load balancer now admits only %s",
		compact(old))}
}

// moveDNSNameservers moves the deprecated clusterNetworking.dnsNameservers to
// clusterNetworking.internalNetwork.dnsNameservers. Chart 0.27 uses the old
// key only when the new one is empty, so the rendered subnet is the same.
func moveDNSNameservers(values map[string]any) []string {
	cn, _ := values["clusterNetworking"].(map[string]any)
	old, ok := cn["dnsNameservers"]
	if !ok {
		return nil
	}
	delete(cn, "dnsNameservers")
	internal, _ := cn["internalNetwork"].(map[string]any)
	if !isEmpty(internal["dnsNameservers"]) {
		return []string{"clusterNetworking.dnsNameservers is dropped: internalNetwork.dnsNameservers is set and wins"}
	}
	if isEmpty(old) {
		return []string{"clusterNetworking.dnsNameservers (empty, deprecated) is dropped"}
	}
	if internal == nil {
		internal = map[string]any{}
		cn["internalNetwork"] = internal
	}
	internal["dnsNameservers"] = old
	return []string{"clusterNetworking.dnsNameservers (deprecated) moves to clusterNetworking.internalNetwork.dnsNameservers"}
}

// autoscaleBooleans turns string autoscale flags (StackHPC sends "true")
// into booleans. The chart tests the flag for truthiness, where every
// non-empty string is true, so "false" becomes true as well: that is what
// the chart did with it.
func autoscaleBooleans(values map[string]any) []string {
	var groups []map[string]any
	if defaults, ok := values["nodeGroupDefaults"].(map[string]any); ok {
		groups = append(groups, defaults)
	}
	list, _ := values["nodeGroups"].([]any)
	for _, item := range list {
		if g, ok := item.(map[string]any); ok {
			groups = append(groups, g)
		}
	}
	var names []string
	for _, g := range groups {
		s, ok := g["autoscale"].(string)
		if !ok {
			continue
		}
		g["autoscale"] = s != ""
		name, _ := g["name"].(string)
		if name == "" {
			name = "nodeGroupDefaults"
		}
		names = append(names, fmt.Sprintf("%s (%q -> %t)", name, s, s != ""))
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return []string{fmt.Sprintf("autoscale strings become booleans with the chart's truthiness: %v", names)}
}

// isEmpty: nil, an empty string, list or map.
func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case []string:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}
