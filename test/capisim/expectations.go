package capisim

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// expectations remember, per owner, the children an owner just created or
// deleted until the informer cache shows it. Reconcilers list children from
// the cache, which lags behind their own writes; acting on a stale list
// would create a Machine twice or delete one too many. (CAPI does the same
// with its consistency store.)
type expectations struct {
	mu      sync.Mutex
	pending map[types.UID]map[string]expectation
	ttl     time.Duration
	now     func() time.Time
}

type expectation struct {
	created bool // true: wait to see it; false: wait to see it gone or deleting
	at      time.Time
}

func newExpectations() *expectations {
	// A lost event must not block an owner forever.
	return &expectations{pending: map[types.UID]map[string]expectation{}, ttl: 30 * time.Second, now: time.Now}
}

func (e *expectations) expect(owner types.UID, child string, created bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.pending[owner]
	if m == nil {
		m = map[string]expectation{}
		e.pending[owner] = m
	}
	m[child] = expectation{created: created, at: e.now()}
}

func (e *expectations) expectCreated(owner types.UID, child string) { e.expect(owner, child, true) }
func (e *expectations) expectDeleted(owner types.UID, child string) { e.expect(owner, child, false) }

// satisfied reports whether the cache shows every pending creation and
// deletion of this owner. present(name) says whether the cache holds the
// child and whether it is being deleted.
func (e *expectations) satisfied(owner types.UID, present func(name string) (exists, deleting bool)) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.pending[owner]
	now := e.now()
	for name, exp := range m {
		exists, deleting := present(name)
		done := (exp.created && exists) || (!exp.created && (!exists || deleting))
		if done || now.Sub(exp.at) > e.ttl {
			delete(m, name)
		}
	}
	if len(m) == 0 {
		delete(e.pending, owner)
		return true
	}
	return false
}

func (e *expectations) forget(owner types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, owner)
}
