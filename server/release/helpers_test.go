package release

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

const (
	chartName = testchart.Name
	v0        = "0.27.0"
	v1        = "0.27.1"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// published is the test chart as the repositories serve it: 0.27.0 and a
// 0.27.1 copy.
func published() []chartrepo.Chart {
	return []chartrepo.Chart{{Dir: testchart.Dir()}, {Dir: testchart.Dir(), Version: v1}}
}

func newCharts(t *testing.T, src Source, opts CacheOptions) *Charts {
	t.Helper()
	c, err := NewCharts(src, opts, quiet())
	if err != nil {
		t.Fatalf("NewCharts: %v", err)
	}
	return c
}

// classified says whether err carries the FailedPrecondition class that
// server/errors.go maps to the shim's NotSupported.
func classified(err error) bool {
	var fp interface{ FailedPrecondition() bool }
	return errors.As(err, &fp) && fp.FailedPrecondition()
}

// wantError checks err is of type E, FailedPrecondition, and names every
// string in mentions.
func wantError[E error](t *testing.T, err error, mentions ...string) E {
	t.Helper()
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("error %v (%T), want a %T", err, err, target)
	}
	if !classified(err) {
		t.Errorf("error %v is not FailedPrecondition", err)
	}
	for _, m := range mentions {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
	return target
}

// digestOf is the recorded digest of a cached version.
func (d diskCache) digestOf(version string) (string, error) {
	b, err := os.ReadFile(d.archivePath(version) + ".sha256")
	return strings.TrimSpace(string(b)), err
}
