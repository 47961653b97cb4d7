package helmvalues

import (
	"path/filepath"
	"testing"
)

// TestLabelsDoc fails when docs/labels.md is not what the registry generates;
// go generate ./helmvalues (or go test ./helmvalues -update) rewrites it.
func TestLabelsDoc(t *testing.T) {
	assertGolden(t, filepath.Join("..", "docs", "labels.md"), LabelsMarkdown())
}
