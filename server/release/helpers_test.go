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

// startHTTP serves a chart repository until the test ends.
func startHTTP(t *testing.T, opts chartrepo.HTTPOptions) *chartrepo.HTTP {
	t.Helper()
	r, err := chartrepo.StartHTTP(opts)
	return serving(t, r, err)
}

// startOCI serves an OCI registry until the test ends.
func startOCI(t *testing.T, opts chartrepo.OCIOptions) *chartrepo.OCI {
	t.Helper()
	r, err := chartrepo.StartOCI(opts)
	return serving(t, r, err)
}

// serving fails the test unless the repository started, and closes it
// when the test ends.
func serving[R io.Closer](t *testing.T, r R, err error) R {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
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
