package helmvalues

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// kubelet_extra_args: kubelet flags a tenant may set, each with its own
// check, so that no value can stop kubelet from starting or reach beyond the
// node (no feature gates, no paths, no credentials, no API server flags).
// The label is `flag=value` items separated by commas, as magnumclient joins
// repeated `--labels kubelet_extra_args=...` options. Map and list flags
// (kube-reserved=cpu=200m,memory=1Gi; eviction-hard=memory.available<500Mi,
// nodefs.available<10%) take the items that follow them until the next
// allowed flag name.

// kubeletFlag is one allowed flag.
type kubeletFlag struct {
	name string
	doc  string                // the value expected, for docs and errors
	item func(s string) string // checks one item of the value ("" when good)
	// joins: whether an item without a flag name of its own continues this
	// flag's value (map and list flags).
	joins func(s string) bool
}

// Kubelet's eviction signals.
var evictionSignals = []string{
	"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
	"imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree", "pid.available",
}

var (
	quantityPattern = regexp.MustCompile(`^[0-9]{1,12}(\.[0-9]{1,6})?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)
	percentPattern  = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9]{1,3})?%$`)
)

// kubeletFlags is the allowlist, in documentation order.
var kubeletFlags = []kubeletFlag{
	intFlag("max-pods", 1, 1000),
	intFlag("pods-per-core", 0, 256),
	reservedFlag("system-reserved"),
	reservedFlag("kube-reserved"),
	thresholdFlag("eviction-hard"),
	thresholdFlag("eviction-soft"),
	signalMapFlag("eviction-soft-grace-period", "a duration such as 1m30s (at most 1h)", checkDuration(time.Hour)),
	signalMapFlag("eviction-minimum-reclaim", "a quantity such as 500Mi or a percentage", checkAmount),
	intFlag("eviction-max-pod-grace-period", 0, 3600),
	valueFlag("eviction-pressure-transition-period", "a duration such as 5m (at most 1h)", checkDuration(time.Hour)),
	intFlag("image-gc-high-threshold", 1, 100),
	intFlag("image-gc-low-threshold", 0, 99),
	valueFlag("image-minimum-gc-age", "a duration such as 2m (at most 24h)", checkDuration(24*time.Hour)),
	valueFlag("container-log-max-size", "a size such as 10Mi (at least 1Mi)", checkLogSize),
	intFlag("container-log-max-files", 2, 100),
	valueFlag("serialize-image-pulls", "true or false", checkBool),
	intFlag("max-parallel-image-pulls", 1, 100),
	intFlag("registry-qps", 0, 1000),
	intFlag("registry-burst", 1, 1000),
	intFlag("event-qps", 0, 1000),
	intFlag("event-burst", 1, 1000),
	intFlag("kube-api-qps", 1, 1000),
	intFlag("kube-api-burst", 1, 1000),
	intFlag("pod-max-pids", -1, 4194304),
	valueFlag("cpu-manager-policy", "none or static", checkOneOf("none", "static")),
	valueFlag("topology-manager-policy", "none, best-effort, restricted or single-numa-node",
		checkOneOf("none", "best-effort", "restricted", "single-numa-node")),
	valueFlag("shutdown-grace-period", "a duration such as 30s (at most 1h)", checkDuration(time.Hour)),
	valueFlag("shutdown-grace-period-critical-pods", "a duration such as 10s (at most 1h)", checkDuration(time.Hour)),
}

var kubeletFlagIndex = func() map[string]*kubeletFlag {
	index := map[string]*kubeletFlag{}
	for i := range kubeletFlags {
		index[kubeletFlags[i].name] = &kubeletFlags[i]
	}
	return index
}()

func kubeletFlagNames() []string {
	names := make([]string, len(kubeletFlags))
	for i, f := range kubeletFlags {
		names[i] = f.name
	}
	return names
}

func never(string) bool { return false }

func valueFlag(name, doc string, check func(string) string) kubeletFlag {
	return kubeletFlag{name: name, doc: doc, item: check, joins: never}
}

func intFlag(name string, min, max int) kubeletFlag {
	doc := fmt.Sprintf("an integer %d–%d", min, max)
	return valueFlag(name, doc, func(s string) string {
		if n, err := strconv.Atoi(s); err != nil || n < min || n > max {
			return doc
		}
		return ""
	})
}

// reservedFlag is system-reserved or kube-reserved: resource=quantity pairs.
func reservedFlag(name string) kubeletFlag {
	const doc = "resource=quantity pairs of cpu, memory, ephemeral-storage and pid, e.g. cpu=200m,memory=1Gi"
	resources := map[string]bool{"cpu": true, "memory": true, "ephemeral-storage": true, "pid": true}
	return kubeletFlag{name: name, doc: doc,
		item: func(s string) string {
			key, value, _ := strings.Cut(s, "=")
			if !resources[key] || !quantityPattern.MatchString(value) || (key == "pid" && strings.ContainsAny(value, ".mkMGTi")) {
				return doc
			}
			return ""
		},
		joins: func(s string) bool { key, _, found := strings.Cut(s, "="); return found && resources[key] },
	}
}

// thresholdFlag is eviction-hard or eviction-soft: signal<amount items.
func thresholdFlag(name string) kubeletFlag {
	doc := "signal<quantity or signal<percentage items, signal one of " + strings.Join(evictionSignals, ", ") +
		", e.g. memory.available<500Mi,nodefs.available<10%"
	return kubeletFlag{name: name, doc: doc,
		item: func(s string) string {
			signal, amount, found := strings.Cut(s, "<")
			if !found || !isEvictionSignal(signal) || checkAmount(amount) != "" {
				return doc
			}
			return ""
		},
		joins: func(s string) bool { return strings.Contains(s, "<") && !strings.Contains(s, "=") },
	}
}

// signalMapFlag is signal=value items (grace periods, minimum reclaims).
func signalMapFlag(name, valueDoc string, check func(string) string) kubeletFlag {
	doc := "signal=value items, signal one of " + strings.Join(evictionSignals, ", ") + ", value " + valueDoc
	return kubeletFlag{name: name, doc: doc,
		item: func(s string) string {
			signal, value, found := strings.Cut(s, "=")
			if !found || !isEvictionSignal(signal) || check(value) != "" {
				return doc
			}
			return ""
		},
		joins: func(s string) bool { signal, _, found := strings.Cut(s, "="); return found && isEvictionSignal(signal) },
	}
}

func isEvictionSignal(s string) bool { return slices.Contains(evictionSignals, s) }

// checkAmount is a quantity or a percentage of at most 100%.
func checkAmount(s string) string {
	const doc = "a quantity such as 500Mi or a percentage such as 10%"
	if percentPattern.MatchString(s) {
		if p, _ := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); p <= 100 {
			return ""
		}
		return doc
	}
	if !quantityPattern.MatchString(s) {
		return doc
	}
	return ""
}

func checkDuration(max time.Duration) func(string) string {
	return func(s string) string {
		if d, err := time.ParseDuration(s); err != nil || d < 0 || d > max {
			return fmt.Sprintf("a duration such as 30s, at most %s", max)
		}
		return ""
	}
}

// checkLogSize is container-log-max-size: a size kubelet accepts (whole
// bytes, binary or decimal suffixes) of at least 1Mi.
func checkLogSize(s string) string {
	const doc = "a size such as 10Mi, at least 1Mi"
	if !quantityPattern.MatchString(s) || strings.ContainsAny(s, ".m") {
		return doc
	}
	if n, _ := strconv.Atoi(s); n != 0 && n < 1<<20 {
		return doc
	}
	if strings.HasSuffix(s, "k") || strings.HasSuffix(s, "Ki") {
		return doc
	}
	return ""
}

func checkBool(s string) string {
	if s != "true" && s != "false" {
		return "true or false"
	}
	return ""
}

func checkOneOf(values ...string) func(string) string {
	return func(s string) string {
		for _, v := range values {
			if s == v {
				return ""
			}
		}
		return strings.Join(values, ", ")
	}
}

// kubeletArgsType parses kubelet_extra_args into flag → value.
var kubeletArgsType = valueType{
	Doc: "comma-separated flag=value kubelet flags from the allowlist below (a leading -- is allowed)",
	parse: func(raw string) (any, string) {
		args, expected := parseKubeletArgs(raw)
		if expected != "" {
			return nil, expected
		}
		return args, ""
	},
}

// parseKubeletArgs splits raw into flags and checks each value.
func parseKubeletArgs(raw string) (map[string]string, string) {
	const doc = "comma-separated flag=value kubelet flags"
	items := map[string][]string{}
	var order []string
	current := ""
	for _, item := range splitItems(raw) {
		name, value, found := strings.Cut(strings.TrimPrefix(item, "--"), "=")
		name = strings.TrimSpace(name)
		if found && kubeletFlagIndex[name] != nil {
			if _, dup := items[name]; dup {
				return nil, fmt.Sprintf("%s; flag %s is given twice", doc, name)
			}
			current = name
			order = append(order, name)
			items[name] = []string{strings.TrimSpace(value)}
			continue
		}
		if current != "" && kubeletFlagIndex[current].joins(item) {
			items[current] = append(items[current], item)
			continue
		}
		if !found {
			return nil, fmt.Sprintf("%s; item %q is not flag=value", doc, item)
		}
		return nil, fmt.Sprintf("%s; flag %q is not one a tenant may set (allowed: %s)", doc, name, strings.Join(kubeletFlagNames(), ", "))
	}
	if len(order) == 0 {
		return nil, "a non-empty list of " + doc
	}
	out := make(map[string]string, len(order))
	for _, name := range order {
		flag, seen := kubeletFlagIndex[name], map[string]bool{}
		for _, item := range items[name] {
			if msg := flag.item(item); msg != "" {
				return nil, fmt.Sprintf("%s; the value of %s, %q, is not %s", doc, name, item, msg)
			}
			key, _, _ := strings.Cut(strings.ReplaceAll(item, "<", "="), "=")
			if flag.joins(item) && seen[key] {
				return nil, fmt.Sprintf("%s; %s sets %s twice", doc, name, key)
			}
			seen[key] = true
		}
		out[name] = strings.Join(items[name], ",")
	}
	return out, ""
}

// checkKubeletCombination checks what only the flags of one node together
// show: settings kubelet refuses to start with. Kubelet's own defaults fill
// in what is not given.
func checkKubeletCombination(args map[string]string) string {
	high, low := 85, 80
	if v, ok := args["image-gc-high-threshold"]; ok {
		high, _ = strconv.Atoi(v)
	}
	if v, ok := args["image-gc-low-threshold"]; ok {
		low, _ = strconv.Atoi(v)
	}
	if low >= high {
		return fmt.Sprintf("image-gc-low-threshold (%d) below image-gc-high-threshold (%d)", low, high)
	}
	grace := itemKeys(args["eviction-soft-grace-period"], "=")
	for _, signal := range itemKeys(args["eviction-soft"], "<") {
		if !slices.Contains(grace, signal) {
			return fmt.Sprintf("an eviction-soft-grace-period for every eviction-soft signal (%s has none)", signal)
		}
	}
	if n, _ := strconv.Atoi(args["max-parallel-image-pulls"]); n > 1 && args["serialize-image-pulls"] != "false" {
		return "serialize-image-pulls=false with max-parallel-image-pulls above 1"
	}
	if args["cpu-manager-policy"] == "static" && !reservesCPU(args["kube-reserved"]) && !reservesCPU(args["system-reserved"]) {
		return "cpu reserved in kube-reserved or system-reserved with cpu-manager-policy=static"
	}
	total, _ := time.ParseDuration(orZero(args["shutdown-grace-period"]))
	critical, _ := time.ParseDuration(orZero(args["shutdown-grace-period-critical-pods"]))
	if critical > total {
		return "shutdown-grace-period-critical-pods at most shutdown-grace-period"
	}
	return ""
}

func orZero(s string) string {
	if s == "" {
		return "0s"
	}
	return s
}

// itemKeys are the keys of "key<sep>value" items joined by commas.
func itemKeys(value, sep string) []string {
	var keys []string
	for _, item := range splitItems(value) {
		key, _, _ := strings.Cut(item, sep)
		keys = append(keys, key)
	}
	return keys
}

func reservesCPU(reserved string) bool {
	for _, item := range splitItems(reserved) {
		if key, value, _ := strings.Cut(item, "="); key == "cpu" && strings.Trim(value, "0.m") != "" {
			return true
		}
	}
	return false
}

// kubeletFlagsDoc is the allowlist as a Markdown list, for docs/labels.md.
func kubeletFlagsDoc() string {
	var doc strings.Builder
	for _, f := range kubeletFlags {
		fmt.Fprintf(&doc, "- `%s`: %s\n", f.name, f.doc)
	}
	return doc.String()
}

// kubeletArgs maps kubelet_extra_args: the cluster's flags to the control
// plane and every worker node group, a node group's own label over them flag
// by flag.
func (b *builder) kubeletArgs() {
	cluster, _ := b.labels.values["kubelet_extra_args"].(map[string]string)
	if len(cluster) > 0 {
		if msg := checkKubeletCombination(cluster); msg != "" {
			b.p.field("labels.kubelet_extra_args", joinKubeletArgs(cluster), msg)
			return
		}
	}
	for _, name := range sortedKeys(cluster) {
		for _, config := range []string{"initConfiguration", "joinConfiguration"} {
			put(b.values, cluster[name], "controlPlane", "kubeadmConfigSpec", config, "nodeRegistration", "kubeletExtraArgs", name)
		}
		put(b.values, cluster[name], "nodeGroupDefaults", "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs", name)
	}
}

// nodeGroupKubeletArgs adds a node group's own kubelet_extra_args to its
// values; the chart merges them over nodeGroupDefaults' flag by flag.
func (b *builder) nodeGroupKubeletArgs(ng NodeGroup, values map[string]any) {
	own, ok := b.nodeGroupLabel(ng, "kubelet_extra_args")
	if !ok {
		return
	}
	args, _ := own.(map[string]string)
	merged := map[string]string{}
	cluster, _ := b.labels.values["kubelet_extra_args"].(map[string]string)
	for k, v := range cluster {
		merged[k] = v
	}
	for k, v := range args {
		merged[k] = v
	}
	if msg := checkKubeletCombination(merged); msg != "" {
		b.p.field(nodeGroupField(ng, "labels.kubelet_extra_args"), joinKubeletArgs(merged), msg)
		return
	}
	for _, name := range sortedKeys(args) {
		put(values, args[name], "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs", name)
	}
}

// joinKubeletArgs is args as the label writes them, flags sorted.
func joinKubeletArgs(args map[string]string) string {
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	items := make([]string, len(names))
	for i, name := range names {
		items[i] = name + "=" + args[name]
	}
	return strings.Join(items, ",")
}
