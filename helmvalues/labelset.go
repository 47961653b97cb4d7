package helmvalues

import (
	"fmt"
	"strconv"
	"strings"
)

// labelSet holds the effective, parsed value of every registered label:
// site default < template label < cluster label. An empty label value means
// "not given here" and falls through to the next level.
type labelSet struct {
	values map[string]any  // bool, int, string or []string, by canonical name
	given  map[string]bool // set by a template or cluster label, not a default
}

func (ls *labelSet) has(name string) bool { _, ok := ls.values[name]; return ok }

func (ls *labelSet) boolean(name string) bool { v, _ := ls.values[name].(bool); return v }

func (ls *labelSet) integer(name string) (int, bool) { v, ok := ls.values[name].(int); return v, ok }

func (ls *labelSet) str(name string) string { v, _ := ls.values[name].(string); return v }

func (ls *labelSet) list(name string) []string { v, _ := ls.values[name].([]string); return v }

// checkLabelData refuses what no label may carry, whatever its type: label
// values are data and must never become template or YAML structure.
func checkLabelData(raw string) string {
	if hasTemplateDelimiters(raw) {
		return "a value without template delimiters ('{{', '{%', '{#'): label values are data, never templates"
	}
	if hasControl(raw) {
		return "a single line of text without control characters"
	}
	return ""
}

// parseLabelValue runs the checks every label shares, then its typed parser.
func parseLabelValue(spec *labelSpec, raw string) (any, string) {
	if msg := checkLabelData(raw); msg != "" {
		return nil, msg
	}
	return spec.Type.parse(raw)
}

// resolveLabels merges, classifies and parses the template's and cluster's
// labels, reporting every problem at once.
func (b *builder) resolveLabels() *labelSet {
	tmpl := b.in.ClusterTemplate.Labels
	merged := mergeLabels(tmpl, b.in.Cluster.Labels)
	b.mergedLabels = merged

	for _, name := range sortedKeys(merged) {
		note, unknown := labelNote(name, merged)
		switch {
		case unknown && b.cfg.StrictLabels:
			expected := "a label this driver reads (see docs/labels.md): unknown labels are errors because the sidecar runs with values.strictLabels"
			if near := nearestLabel(name); near != "" {
				expected = fmt.Sprintf("a label this driver reads, such as %s (see docs/labels.md): unknown labels are errors because the sidecar runs with values.strictLabels", near)
			}
			b.p.field("labels."+name, merged[name], expected)
		case note != "":
			b.warn("%s", note)
		}
	}
	for _, note := range templateOnlyNotes(tmpl, b.in.Cluster.Labels) {
		b.warn("%s", note)
	}

	ls := &labelSet{values: map[string]any{}, given: map[string]bool{}}
	for i := range labelSpecs {
		spec := &labelSpecs[i]
		source := merged
		if spec.Scope == scopeTemplate {
			source = tmpl
		}
		field, raw, given := "labels."+spec.Name, source[spec.Name], true
		if strings.TrimSpace(raw) == "" {
			raw, given = "", false
			for _, alias := range spec.Aliases {
				if strings.TrimSpace(source[alias]) != "" {
					field, raw, given = "labels."+alias, source[alias], true
					break
				}
			}
		}
		if !given {
			raw = spec.Default
			if d := b.cfg.LabelDefaults[spec.Name]; strings.TrimSpace(d) != "" && spec.Scope != scopeTemplate {
				raw = d
			}
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		value, expected := parseLabelValue(spec, raw)
		if expected != "" {
			// An invalid site default is reported once, by validateConfig.
			if given {
				b.p.field(field, raw, expected)
			}
			continue
		}
		ls.values[spec.Name] = value
		ls.given[spec.Name] = given
	}
	return ls
}

// nodeGroupLabel returns a node group's own value of a node-group-scoped
// label when it differs from the cluster-wide one. Magnum copies the cluster's
// labels into its default node groups, so an equal value is no override.
func (b *builder) nodeGroupLabel(ng NodeGroup, name string) (any, bool) {
	spec := labelRegistry[name]
	raw := ng.Labels[name]
	if spec == nil || spec.Scope != scopeNodeGroup || strings.TrimSpace(raw) == "" ||
		strings.TrimSpace(raw) == strings.TrimSpace(b.mergedLabels[name]) {
		return nil, false
	}
	value, expected := parseLabelValue(spec, raw)
	if expected != "" {
		b.p.field(nodeGroupField(ng, "labels."+name), raw, expected)
		return nil, false
	}
	if current, ok := b.labels.values[name]; ok && fmt.Sprint(current) == fmt.Sprint(value) {
		return nil, false
	}
	return value, true
}

// nodeGroupField names a field of a node group in errors; odd names are
// quoted so the field stays one readable token.
func nodeGroupField(ng NodeGroup, field string) string {
	name := ng.Name
	if name == "" || hasControl(name) || strings.ContainsAny(name, "[]\"") || strings.TrimSpace(name) != name {
		name = strconv.Quote(name)
	}
	return fmt.Sprintf("nodegroups[%s].%s", name, field)
}
