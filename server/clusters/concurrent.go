package clusters

import (
	"context"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// allOf runs fns at once and waits for every one, then returns the first
// error to happen. None is cancelled when another fails (an errgroup without
// a context): a step that has created something (an application credential)
// must be left to store or clean it up, so nothing leaks; each step is
// idempotent, so a retry of the operation converges either way. A step that
// panics fails as a panics.Error (logged to log, counted) and the others run
// to their end.
func allOf(ctx context.Context, log *slog.Logger, fns ...func() error) error {
	g := goAll(ctx, log, "clusters/allOf", fns...)
	return g.Wait()
}

// goAll starts fns in an errgroup, each through panics.Run under where, and
// returns the group to wait on.
func goAll(ctx context.Context, log *slog.Logger, where string, fns ...func() error) *errgroup.Group {
	g := new(errgroup.Group)
	for _, fn := range fns {
		g.Go(func() error { return panics.Run(ctx, log, where, fn) })
	}
	return g
}
