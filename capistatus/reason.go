package capistatus

import (
	"sort"
	"strings"
	"time"
)

// rank orders what a cluster waits for, most important first. Problems a user
// can act on (an OpenStack refusal, a failing addon) come before progress; then
// stages in the order they happen, because a later stage is usually only
// waiting for an earlier one.
type rank int

const (
	rankProblem rank = iota
	rankCluster
	rankInfrastructure
	rankControlPlane
	rankWorkers
	rankSummary // the Cluster's own Available summary, which repeats the above
	rankAddons
)

// item is one thing the cluster is waiting for.
type item struct {
	rank rank
	text string
}

// render joins items, most important first, bounded in count and length.
func render(items []item) string {
	sorted := append([]item(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].rank < sorted[j].rank })
	var parts []string
	for i, it := range sorted {
		if i == maxReasonItems {
			parts = append(parts, "+"+itoa(len(sorted)-i)+" more")
			break
		}
		limit := maxItemLen
		if it.rank == rankProblem {
			// A provider's error is what the user came for (the quota that
			// ran out is named at the end of an OpenStack API error), so it
			// gets more room than progress does.
			limit = maxProblemLen
		}
		parts = append(parts, truncate(it.text, limit))
	}
	return truncate(strings.Join(parts, "; "), maxReasonLen)
}

// forDeletion is the phrase that turns "waiting for" into "waiting for
// deletion of".
const forDeletion = " deletion of"

func waitingFor(what string, items []item) string { return "waiting for" + what + ": " + render(items) }

func timedOut(after time.Duration, what string, items []item) string {
	return "timed out after " + minutes(after) + " waiting for" + what + ": " + render(items)
}

// minutes renders a timeout the way operators configure it.
func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return plural(int(d/time.Minute), "minute")
	}
	return d.String()
}

// labelled prefixes facets with the thing they describe: "control plane: 1 of
// 3 machines ready, ...".
func labelled(r rank, label string, facets []string) item {
	return item{rank: r, text: label + ": " + strings.Join(facets, ", ")}
}
