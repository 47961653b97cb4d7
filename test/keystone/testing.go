package keystone

import (
	"context"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds Start in tests. A start takes seconds on an idle
// machine; the margin is for a CI box busy compiling.
const startTimeout = 3 * time.Minute

// StartT starts a Keystone for one test and stops it when the test ends.
// Missing Debian packages fail the test (never skip it) with the hint to run
// hack/deps.sh.
func StartT(t testing.TB) *Keystone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	k, err := Start(ctx, Options{})
	if err != nil {
		t.Fatalf("start keystone: %v", err)
	}
	t.Logf("keystone %s started in %s", k.AuthURL, k.StartDuration.Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("keystone logs:%s", k.Logs())
		}
		k.Stop()
	})
	return k
}

// Shared is one Keystone for a whole test binary, started by the first test
// that asks for it; TestMain runs the tests with Run, which stops it after. Tests sharing it must
// use unique project and user names.
type Shared struct {
	mu sync.Mutex
	k  *Keystone
	// err is kept so every later test fails with the same cause instead
	// of starting Keystone again.
	err error
}

// Get returns the shared Keystone, starting it on first use.
func (s *Shared) Get(t testing.TB) *Keystone {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.k == nil && s.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		s.k, s.err = Start(ctx, Options{})
		if s.err == nil {
			t.Logf("keystone %s started in %s", s.k.AuthURL, s.k.StartDuration.Round(time.Millisecond))
		}
	}
	if s.err != nil {
		t.Fatalf("start keystone: %v", s.err)
	}
	return s.k
}

// Stop stops the shared Keystone if a test started it.
func (s *Shared) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.k != nil {
		s.k.Stop()
		s.k = nil
	}
}

// Run runs the package's tests, then stops the Keystone if one started; its
// result is TestMain's exit code:
//
//	func TestMain(m *testing.M) { os.Exit(shared.Run(m)) }
func (s *Shared) Run(m *testing.M) int {
	defer s.Stop()
	return m.Run()
}
