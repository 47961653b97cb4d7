package clusters

import (
	"context"
	"log/slog"
	"sync"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// allOf runs fns at once and waits for every one, then returns the first
// error in fns' order. None is cancelled when another fails: a step that
// has created something (an application credential) must be left to store
// or clean it up, so nothing leaks; each step is idempotent, so a retry of
// the operation converges either way. A step that panics fails as a
// panics.Error (logged to log, counted) and the others run to their end.
func allOf(ctx context.Context, log *slog.Logger, fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = panics.Run(ctx, log, "clusters/allOf", fn) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
