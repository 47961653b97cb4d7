package magnum

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// GuidePath is docs/operator-guide.md: the tests run its marked blocks as
// they are (docs are recipes the tests run).
func GuidePath() string { return filepath.Join(testbed.RepoRoot(), "docs", "operator-guide.md") }

// guideBlockRE is a block marked for the tests: an HTML comment naming it,
// then a fenced code block.
var guideBlockRE = regexp.MustCompile("(?s)<!-- test: ([a-z0-9-]+) -->\\s*```[a-z]*\\n(.*?)\\n```")

// GuideBlock is the body of the guide's code block marked
// `<!-- test: name -->`.
func GuideBlock(name string) (string, error) {
	raw, err := readGuide()
	if err != nil {
		return "", err
	}
	for _, m := range guideBlockRE.FindAllStringSubmatch(raw, -1) {
		if m[1] == name {
			return m[2], nil
		}
	}
	return "", fmt.Errorf("%s has no block marked <!-- test: %s -->", GuidePath(), name)
}

func readGuide() (string, error) {
	raw, err := os.ReadFile(GuidePath())
	return string(raw), err
}
