package debianroot

import (
	"context"
	"testing"
	"time"
)

// TestLockSuite: a second holder of a suite's lock waits until the first
// lets go (as a lane waits for make test's background build), gives up
// with its context, and other suites do not wait at all.
func TestLockSuite(t *testing.T) {
	dir := t.TempDir()
	quiet := func(string, ...any) {}
	unlock, err := lockSuite(context.Background(), dir, "trixie", quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, err := lockSuite(ctx, dir, "trixie", quiet); err == nil {
		t.Fatal("a second lock of trixie was granted while the first was held")
	}
	other, err := lockSuite(context.Background(), dir, "sid", quiet)
	if err != nil {
		t.Fatalf("sid waited for trixie's lock: %v", err)
	}
	other()
	got := make(chan error, 1)
	go func() {
		again, err := lockSuite(context.Background(), dir, "trixie", quiet)
		if err == nil {
			again()
		}
		got <- err
	}()
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiting holder failed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting holder did not get the lock after the first let go")
	}
}
