package capistatus

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
)

// TestMain records every condition type derivation looks up while this
// package's tests run, and fails the run if one is missing from
// conditionTypesRead: the watch cache keeps only conditions that
// ConditionMatters, so a lookup of an unlisted type would read nothing
// there and derive another answer than from the live objects.
func TestMain(m *testing.M) {
	var mu sync.Mutex
	seen := map[string]bool{}
	lookedUp = func(t string) {
		mu.Lock()
		seen[t] = true
		mu.Unlock()
	}
	code := m.Run()
	lookedUp = nil
	var missing []string
	for t := range seen {
		if !conditionTypesRead[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		fmt.Fprintf(os.Stderr, "FAIL: derivation looks up condition types %v that capistatus/reads.go's conditionTypesRead does not list\n", missing)
		code = 1
	}
	if code == 0 && len(seen) < len(conditionTypesRead)/2 {
		// The hook is wired: an empty record would make the check vacuous.
		fmt.Fprintf(os.Stderr, "FAIL: the tests looked up only %d condition types; is lookedUp still called?\n", len(seen))
		code = 1
	}
	os.Exit(code)
}
