package clusters

import "sync"

// allOf runs fns at once and waits for every one, then returns the first
// error in fns' order. None is cancelled when another fails: a step that
// has created something (an application credential) must be left to store
// or clean it up, so nothing leaks; each step is idempotent, so a retry of
// the operation converges either way.
func allOf(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
