package capistatus

import (
	"strings"
	"unicode/utf8"
)

// Lengths that keep status_reason readable in `openstack coe cluster show`
// while still carrying a provider's whole error in the common case.
const (
	maxReasonItems   = 4    // awaited items named before "(+N more)"
	maxItemLen       = 300  // one awaited item, in runes
	maxProblemLen    = 1000 // one problem item (a provider's error), in runes
	maxReasonLen     = 1500 // the whole status_reason, in runes
	maxConditionText = 200  // a condition message quoted inside an item
)

// oneLine flattens a multi-line message (CAPI v1beta2 condition messages are
// "* Reason: detail" bullet lists) into one line joined by "; ".
func oneLine(msg string) string {
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimPrefix(line, "* "))
		if line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

// truncate cuts s to at most n runes, marking the cut with "...". It never
// splits a UTF-8 sequence.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 3 {
		return strings.Repeat(".", max(n, 0))
	}
	runes := []rune(s)
	return string(runes[:n-3]) + "..."
}

// plural returns "1 machine" / "2 machines".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return itoa(n) + " " + word + "s"
}
