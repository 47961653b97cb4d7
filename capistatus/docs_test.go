package capistatus

import (
	"os"
	"regexp"
	"sort"
	"testing"
)

// rowsTested is every docs/status.md row ID some test case names.
func rowsTested() map[string]bool {
	ids := map[string]bool{}
	for _, cases := range [][]deriveCase{provisioningCases, failureCases, timeoutCases, deleteCases, untouchedCases} {
		for _, c := range cases {
			ids[c.row] = true
		}
	}
	for _, c := range nodeGroupCases {
		ids[c.row] = true
	}
	for _, c := range endpointCases {
		ids[c.row] = true
	}
	for _, c := range healthCases {
		ids[c.row] = true
	}
	for _, c := range credentialHealthCases {
		ids[c.row] = true
	}
	for _, c := range snapshotCases {
		ids[c.row] = true
	}
	return ids
}

// TestEveryRowHasATest keeps docs/status.md and the tests in step: each row of
// the transition tables has at least one test case, and each case names a row
// that exists.
func TestEveryRowHasATest(t *testing.T) {
	doc, err := os.ReadFile("../docs/status.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z]-\d\d) \|`).FindAllStringSubmatch(string(doc), -1) {
		if documented[m[1]] {
			t.Errorf("docs/status.md: row %s appears twice", m[1])
		}
		documented[m[1]] = true
	}
	if len(documented) < 50 {
		t.Fatalf("found only %d rows in docs/status.md; is the table format unchanged?", len(documented))
	}
	tested := rowsTested()
	var missing, unknown []string
	for id := range documented {
		if !tested[id] {
			missing = append(missing, id)
		}
	}
	for id := range tested {
		if !documented[id] {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	if len(missing) > 0 {
		t.Errorf("rows of docs/status.md without a test: %v", missing)
	}
	if len(unknown) > 0 {
		t.Errorf("test cases naming rows docs/status.md does not have: %v", unknown)
	}
}
