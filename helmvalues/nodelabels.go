package helmvalues

import (
	"fmt"
	"strings"
)

// Node labels and taints of worker node groups. Magnum 23 (API 1.14) has
// NodeGroup.node_labels and node_taints; Magnum 15–22 have neither, so the
// labels node_labels and node_taints carry the same data in kubelet's own
// flag syntax (--node-labels, --register-with-taints). One set of checks
// serves both, so a label and a field are refused for the same reasons.

const (
	nodeLabelKeyExpected   = "a Kubernetes label key ([prefix/]name, name at most 63 characters of letters, digits, '-', '_', '.')"
	nodeLabelKubeletExpect = "a label kubelet may set on its node: kubernetes.io and k8s.io labels are limited to the node.kubernetes.io and kubelet.kubernetes.io namespaces and a few well-known keys"
	nodeLabelChartExpected = "a label outside capi.stackhpc.com/, which the chart manages"
	nodeLabelValueExpected = "a Kubernetes label value (at most 63 characters of letters, digits, '-', '_', '.')"
	taintKeyExpected       = "a Kubernetes taint key ([prefix/]name)"
	taintValueExpected     = "a taint value (at most 63 characters of letters, digits, '-', '_', '.')"
	taintEffectExpected    = "NoSchedule, PreferNoSchedule or NoExecute"
)

// checkNodeLabelKey returns what a node label key should have been, or "".
func checkNodeLabelKey(key string) string {
	switch {
	case !isQualifiedName(key):
		return nodeLabelKeyExpected
	case !kubeletAllowsLabel(key):
		return nodeLabelKubeletExpect
	case strings.HasPrefix(key, "capi.stackhpc.com/"):
		return nodeLabelChartExpected
	}
	return ""
}

// checkTaint returns the part of a taint that is wrong (key, value or
// effect) and what it should have been, or two empty strings.
func checkTaint(t Taint) (part, expected string) {
	switch {
	case !isQualifiedName(t.Key):
		return "key", taintKeyExpected
	case !isLabelValue(t.Value):
		return "value", taintValueExpected
	case t.Effect != "NoSchedule" && t.Effect != "PreferNoSchedule" && t.Effect != "NoExecute":
		return "effect", taintEffectExpected
	}
	return "", ""
}

// nodeLabelsType parses the node_labels label: kubelet's --node-labels
// syntax, key=value pairs separated by commas. magnumclient joins repeated
// `--labels node_labels=...` options with commas, which is how a user gives
// several.
var nodeLabelsType = valueType{
	Doc: "comma-separated key=value Kubernetes node labels (kubelet's --node-labels syntax)",
	parse: func(raw string) (any, string) {
		const doc = "comma-separated key=value Kubernetes node labels"
		out := map[string]string{}
		for _, item := range splitItems(raw) {
			key, value, found := strings.Cut(item, "=")
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if !found {
				return nil, fmt.Sprintf("%s; item %q is not key=value", doc, item)
			}
			if msg := checkNodeLabelKey(key); msg != "" {
				return nil, fmt.Sprintf("%s; key %q is not %s", doc, key, msg)
			}
			if !isLabelValue(value) {
				return nil, fmt.Sprintf("%s; the value of %s, %q, is not %s", doc, key, value, nodeLabelValueExpected)
			}
			if _, dup := out[key]; dup {
				return nil, fmt.Sprintf("%s; key %s is given twice", doc, key)
			}
			out[key] = value
		}
		if len(out) == 0 {
			return nil, doc
		}
		return out, ""
	},
}

// nodeTaintsType parses the node_taints label: kubelet's
// --register-with-taints syntax, key[=value]:Effect separated by commas.
var nodeTaintsType = valueType{
	Doc: "comma-separated key[=value]:Effect Kubernetes taints (kubelet's --register-with-taints syntax)",
	parse: func(raw string) (any, string) {
		const doc = "comma-separated key[=value]:Effect taints"
		var out []Taint
		seen := map[string]bool{}
		for _, item := range splitItems(raw) {
			i := strings.LastIndex(item, ":")
			if i < 0 {
				return nil, fmt.Sprintf("%s; item %q has no :Effect (%s)", doc, item, taintEffectExpected)
			}
			key, value, _ := strings.Cut(item[:i], "=")
			t := Taint{Key: strings.TrimSpace(key), Value: strings.TrimSpace(value), Effect: strings.TrimSpace(item[i+1:])}
			if part, expected := checkTaint(t); part != "" {
				return nil, fmt.Sprintf("%s; the %s of item %q is not %s", doc, part, item, expected)
			}
			if seen[t.Key+":"+t.Effect] {
				return nil, fmt.Sprintf("%s; %s:%s is given twice", doc, t.Key, t.Effect)
			}
			seen[t.Key+":"+t.Effect] = true
			out = append(out, t)
		}
		if len(out) == 0 {
			return nil, doc
		}
		return out, ""
	},
}

// splitItems splits a comma-separated label value, dropping empty items.
func splitItems(raw string) []string {
	var items []string
	for _, item := range strings.Split(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// workerNodeLabels is a worker node group's node labels: the node_labels
// label (the node group's own, else the cluster's), with the node group's
// node_labels field (Magnum ≥ 23) overriding it key by key.
func (b *builder) workerNodeLabels(ng NodeGroup) map[string]any {
	out := map[string]any{}
	if fromLabel, ok := b.nodeGroupLabelOrCluster(ng, "node_labels").(map[string]string); ok {
		for k, v := range fromLabel {
			out[k] = v
		}
	}
	for k, v := range b.nodeLabels(ng) {
		out[k] = v
	}
	return out
}

// workerTaints is a worker node group's taints: the node_taints label's, then
// the node_taints field's (Magnum ≥ 23), which replaces a label taint of the
// same key and effect.
func (b *builder) workerTaints(ng NodeGroup) []any {
	fields := b.taints(ng)
	fromField := map[string]bool{}
	for _, t := range fields {
		m := t.(map[string]any)
		fromField[fmt.Sprint(m["key"], ":", m["effect"])] = true
	}
	var out []any
	if fromLabel, ok := b.nodeGroupLabelOrCluster(ng, "node_taints").([]Taint); ok {
		for _, t := range fromLabel {
			if !fromField[t.Key+":"+t.Effect] {
				out = append(out, taintValue(t))
			}
		}
	}
	return append(out, fields...)
}

// part is the key, value or effect of t, as checkTaint names them.
func (t Taint) part(name string) string {
	switch name {
	case "key":
		return t.Key
	case "value":
		return t.Value
	}
	return t.Effect
}

// nodeGroupLabelOrCluster is a node-group-scoped label's value for ng: the
// node group's own when it overrides the cluster's, else the cluster's.
func (b *builder) nodeGroupLabelOrCluster(ng NodeGroup, name string) any {
	if v, ok := b.nodeGroupLabel(ng, name); ok {
		return v
	}
	return b.labels.values[name]
}

// taintValue is a taint in the kubeadm nodeRegistration form.
func taintValue(t Taint) map[string]any {
	taint := map[string]any{"key": t.Key, "effect": t.Effect}
	if t.Value != "" {
		taint["value"] = t.Value
	}
	return taint
}
