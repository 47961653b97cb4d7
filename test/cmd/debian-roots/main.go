// Command debian-roots builds the Debian root file systems the Magnum lanes
// run from (trixie for Magnum 20, sid for 23), when they are not cached yet.
// `make test` starts it first, in the background: debootstrap waits mostly
// on the network and dpkg, so it runs beside the compiles instead of inside
// the Magnum lanes after them. A lane that finds a root still being built
// waits for it (test/magnum's EnsureRoot locks the suite across processes).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/magnum-capi/magnum-capi/test/debianroot"
	"github.com/magnum-capi/magnum-capi/test/magnum/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%s] debian-roots: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, rel := range release.Releases {
		if rel.Host {
			continue
		}
		g.Go(func() error {
			begin := time.Now()
			path, info, err := debianroot.Ensure(ctx, rel.Suite, logf)
			if err != nil {
				return fmt.Errorf("Magnum %d's Debian %s root: %w", rel.Major, rel.Suite, err)
			}
			logf("Debian %s (Magnum %s) ready in %s: %s", rel.Suite, info.Versions["python3-magnum"], time.Since(begin).Round(time.Second), path)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		logf("%v", err)
		os.Exit(1)
	}
}
