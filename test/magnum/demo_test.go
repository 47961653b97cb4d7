package magnum

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// demo runs `make demo`'s first half (RunDemo) as the demo runs it, on the
// demo's own lane (TestCLILifecycle/demo), so that a demo that breaks fails
// make test. The demo's output, the CLI's own tables and each status as
// Magnum shows it, is the test's log.
func demo(t *testing.T, l *Lane) {
	var out bytes.Buffer
	begin := time.Now()
	say := func(format string, args ...any) {
		fmt.Fprintf(&out, "[%6.1fs] %s\n", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	err := RunDemo(context.Background(), l, t.TempDir(), &out, say)
	t.Logf("the demo's output:\n%s", out.String())
	if err != nil {
		t.Fatalf("the demo failed: %v", err)
	}
}
