package capisim

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// setCond sets a v1beta2 condition, keeping its lastTransitionTime when the
// status does not change, and stamping the generation it describes.
func setCond(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	sortConds(*conds)
}

// sortConds orders conditions as CAPI does for kubectl readers: Available,
// Ready first, then alphabetically; the order also keeps patches stable.
func sortConds(conds []metav1.Condition) {
	rank := func(t string) int {
		switch t {
		case clusterv1.AvailableCondition:
			return 0
		case clusterv1.ReadyCondition:
			return 1
		}
		return 2
	}
	sort.SliceStable(conds, func(i, j int) bool {
		ri, rj := rank(conds[i].Type), rank(conds[j].Type)
		if ri != rj {
			return ri < rj
		}
		return conds[i].Type < conds[j].Type
	})
}

func boolStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

func condIsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

// condSource is one object whose condition is aggregated.
type condSource struct {
	kind, name string
	conds      []metav1.Condition
}

func machineSources(machines []*clusterv1.Machine) []condSource {
	out := make([]condSource, 0, len(machines))
	for _, m := range machines {
		out = append(out, condSource{kind: "Machine", name: m.Name, conds: m.Status.Conditions})
	}
	return out
}

// aggregation is one condition summarised over many objects.
type aggregation struct {
	// issue: some object reports the condition in its "bad" state (False,
	// or True for a negative-polarity condition such as RollingOut).
	issue bool
	// unknown: no issue, but some object reports Unknown or nothing.
	unknown bool
	message string
}

// aggregate summarises one condition of many objects into a condition of
// their owner, like CAPI's aggregate conditions: the message lists the
// objects not in the good state, grouped by message.
func aggregate(sources []condSource, condType string, negative bool) aggregation {
	good := metav1.ConditionTrue
	if negative {
		good = metav1.ConditionFalse
	}
	var agg aggregation
	byMessage := map[string][]string{}
	kindOf := map[string]string{}
	for _, src := range sources {
		c := meta.FindStatusCondition(src.conds, condType)
		status, msg := metav1.ConditionUnknown, fmt.Sprintf("Condition %s not yet reported", condType)
		if c != nil {
			status, msg = c.Status, c.Message
		}
		if status == good {
			continue
		}
		if status == metav1.ConditionUnknown {
			agg.unknown = true
		} else {
			agg.issue = true
		}
		key := src.kind + "\x00" + msg
		byMessage[key] = append(byMessage[key], src.name)
		kindOf[key] = src.kind
	}
	if agg.issue {
		agg.unknown = false
	}
	agg.message = listMessage(byMessage, kindOf)
	return agg
}

// status maps an aggregation of a positive condition to a status and one of
// the reasons given.
func (a aggregation) status(ok, notOK, unknown string) (metav1.ConditionStatus, string) {
	switch {
	case a.issue:
		return metav1.ConditionFalse, notOK
	case a.unknown:
		return metav1.ConditionUnknown, unknown
	}
	return metav1.ConditionTrue, ok
}

// listMessage renders "* Machine a: msg" lines, grouped by kind and
// message, at most three names per line, as CAPI's aggregated messages look.
func listMessage(byKey map[string][]string, kindOf map[string]string) string {
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		names := byKey[k]
		sort.Strings(names)
		kind := kindOf[k]
		if len(names) > 1 {
			kind += "s"
		}
		shown, more := names, ""
		if len(names) > 3 {
			shown, more = names[:3], fmt.Sprintf(", ... (%d more)", len(names)-3)
		}
		line := fmt.Sprintf("* %s %s%s", kind, strings.Join(shown, ", "), more)
		if msg := strings.SplitN(k, "\x00", 2)[1]; msg != "" {
			line += ": " + indentFollowing(msg)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// indentFollowing indents the lines after the first, so a multi-line
// message nests under the bullet it belongs to.
func indentFollowing(msg string) string {
	return strings.ReplaceAll(msg, "\n", "\n  ")
}

// capoConditions reads and writes the v1beta1 (CAPI "deprecated") condition
// list that CAPO keeps in status.conditions, for CAPI's v1beta1 condition
// helpers.
type capoConditions struct{ *unstructured.Unstructured }

func (c capoConditions) GetV1Beta1Conditions() clusterv1.Conditions {
	raw, ok, err := unstructured.NestedSlice(c.Object, "status", "conditions")
	if err != nil || !ok {
		return nil
	}
	out := make(clusterv1.Conditions, 0, len(raw))
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var cond clusterv1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &cond); err == nil {
			out = append(out, cond)
		}
	}
	return out
}

func (c capoConditions) SetV1Beta1Conditions(conds clusterv1.Conditions) {
	raw := make([]any, 0, len(conds))
	for i := range conds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conds[i])
		if err != nil {
			continue
		}
		raw = append(raw, m)
	}
	_ = unstructured.SetNestedSlice(c.Object, raw, "status", "conditions")
}
