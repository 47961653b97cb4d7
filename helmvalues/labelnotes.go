package helmvalues

import (
	"fmt"
	"sort"
	"strings"
)

// LabelNotes are what a user should know about the labels of a cluster
// template and cluster that the driver does not apply as written: unknown
// labels (with the nearest known name when one is close), deprecated names,
// labels of other drivers that have no effect here, and cluster labels read
// from the template only. Build reports the same notes as warnings; the
// sidecar also shows them in status_reason while a cluster is created or
// updated, because Magnum's users read that and never the sidecar's log.
func LabelNotes(template, cluster map[string]string) []string {
	merged := mergeLabels(template, cluster)
	var notes []string
	for _, name := range sortedKeys(merged) {
		if note, _ := labelNote(name, merged); note != "" {
			notes = append(notes, note)
		}
	}
	return append(notes, templateOnlyNotes(template, cluster)...)
}

// mergeLabels is the cluster's labels over the template's.
func mergeLabels(template, cluster map[string]string) map[string]string {
	merged := make(map[string]string, len(template)+len(cluster))
	for k, v := range template {
		merged[k] = v
	}
	for k, v := range cluster {
		merged[k] = v
	}
	return merged
}

// labelNote says what happens to label name (set to merged[name]) if it is
// not simply applied; unknown reports a name the registry does not have at
// all (an error under values.strictLabels).
func labelNote(name string, merged map[string]string) (note string, unknown bool) {
	switch {
	case labelRegistry[name] != nil:
		return "", false
	case labelAliases[name] != "":
		canonical := labelAliases[name]
		if strings.TrimSpace(merged[canonical]) != "" {
			return fmt.Sprintf("label %s is a deprecated name of %s, which is also set; %s is ignored", name, canonical, name), false
		}
		return fmt.Sprintf("label %s is deprecated; use %s", name, canonical), false
	case ignoredLabels[name] != "":
		return fmt.Sprintf("label %s has no effect: %s", name, ignoredLabels[name]), false
	}
	note = fmt.Sprintf("label %s is not known to this driver and is ignored", name)
	if near := nearestLabel(name); near != "" {
		note += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return note, true
}

// templateOnlyNotes are the cluster labels that differ from the template's
// for labels read from the template only.
func templateOnlyNotes(template, cluster map[string]string) []string {
	var notes []string
	for i := range labelSpecs {
		spec := &labelSpecs[i]
		if spec.Scope != scopeTemplate {
			continue
		}
		if c, t := strings.TrimSpace(cluster[spec.Name]), strings.TrimSpace(template[spec.Name]); c != "" && c != t {
			notes = append(notes, fmt.Sprintf("cluster label %s=%s is ignored: it is read from the cluster template only", spec.Name, c))
		}
	}
	return notes
}

// nearestLabel is the registered label (or deprecated name) closest to
// name, if it is a near miss: at most two edits away, and fewer than a
// third of name's length, so short unrelated names are not "corrected".
func nearestLabel(name string) string {
	candidates := make([]string, 0, len(labelRegistry)+len(labelAliases))
	for known := range labelRegistry {
		candidates = append(candidates, known)
	}
	for alias := range labelAliases {
		candidates = append(candidates, alias)
	}
	sort.Strings(candidates) // ties go to the first in order, every time
	best, bestDistance := "", min(2, (len(name)-1)/3)
	for _, known := range candidates {
		if d := editDistance(strings.ToLower(name), known); d <= bestDistance && (best == "" || d < editDistance(strings.ToLower(name), best)) {
			best = known
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: label
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
