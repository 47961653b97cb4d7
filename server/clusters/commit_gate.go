package clusters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// An operation that writes the cluster's release has a point of no return:
// the release's first write (release.Target.BeforeWrite), after which
// Cluster API acts on what Helm writes and nothing can be taken back. Before
// Helm has written the release record, a failure or a deadline leaves the
// release as it was (what prepare wrote the operation may undo), and Magnum
// may be told so; after, Magnum must keep what it asked for.
//
// Helm cannot be cancelled (release_writing.go): when the caller's deadline
// passes during Deploy, Helm may not yet have written and would write after
// the caller was told the operation failed. The gate settles that race: at
// the deadline it is closed, and a Helm that reaches its first write later
// is refused, so "not committed" stays true.

// gateState is where a commitGate stands.
type gateState int

const (
	gateOpen      gateState = iota // nothing decided yet
	gateCommitted                  // prepare succeeded; the release is being written
	gateRefused                    // prepare failed, or the caller gave up first
)

// errGateClosed refuses a release write that came after the caller had
// been told the operation did not happen.
var errGateClosed = errors.New("the call's deadline passed before the release was written; nothing was written")

// commitGate decides, once, whether an operation passed its point of no
// return. prepare (nil for none) runs at the release's first write, under
// the gate's lock, and is that write's condition.
type commitGate struct {
	mu      sync.Mutex
	state   gateState
	err     error
	tried   bool // prepare ran (and may have written part of its work)
	prepare func() error
	written atomic.Bool // a release record write succeeded
}

// pass is the release's BeforeWrite: every record write asks it; only the
// first runs prepare.
func (g *commitGate) pass() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case gateCommitted:
		return nil
	case gateRefused:
		return g.err
	}
	if g.prepare != nil {
		g.tried = true
		if err := g.prepare(); err != nil {
			g.state, g.err = gateRefused, err
			return err
		}
	}
	g.state = gateCommitted
	return nil
}

// close decides: committed, or refused from now on. It waits for a prepare
// in progress (which runs on the operation's context, so it ends with it).
func (g *commitGate) close() (committed, tried bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == gateOpen {
		g.state, g.err = gateRefused, errGateClosed
	}
	return g.state == gateCommitted, g.tried
}

// deployOutcome is where a gated deploy ended.
type deployOutcome struct {
	// committed: the gate let Helm's first write through: prepare's work
	// is in place, and Helm writes (or tried to; wrote says whether it did).
	committed bool
	// background: Helm was still writing when the caller's deadline came;
	// it finishes on its own and the status path follows the cluster.
	background bool
	// prepared: prepare ran, so part of its work may have been written
	// even if it failed.
	prepared bool
	// wrote: Helm wrote the release record, so the release changed (a
	// committed deploy whose first record write failed changed only what
	// prepare wrote). A deploy in the background counts as written.
	wrote bool
}

// deployGated deploys the cluster's release behind a commit gate running
// prepare at the first write. A deadline that passes after the first write
// is not a failure: Helm finishes in the background, and the operation is
// under way as if it had returned in time (the status path reports it).
// The caller holds the cluster's Lease.
func (s *Service) deployGated(ctx context.Context, op *operation, carry bool, prepare func() error) (deployOutcome, error) {
	g := &commitGate{prepare: prepare}
	op.beforeWrite, op.wrote = g.pass, func() { g.written.Store(true) }
	err := s.deployRelease(ctx, op, op.values.values, carry)
	op.beforeWrite, op.wrote = nil, nil
	var out deployOutcome
	out.committed, out.prepared = g.close()
	out.wrote = g.written.Load()
	var running *stillWritingError
	if out.committed && errors.As(err, &running) {
		out.background, out.wrote = true, true
		// The status guard waits for the revision Helm is writing, as
		// for a write that returned (status_guard.go): the next one.
		next := 1
		if op.deployed != nil {
			next = op.deployed.Revision + 1
		}
		s.rememberDeployed(op.stackID(), next)
		s.logger(ctx).WarnContext(ctx, "the call's deadline passed while Helm was writing the release; it finishes in the background and the status path follows the cluster",
			"stack_id", op.stackID())
		return out, nil
	}
	if !out.committed && errors.As(err, &running) {
		// Helm had not written when the deadline came, and now never will.
		return out, fmt.Errorf("the call's deadline passed before release %s was written; nothing of it was written: %w", op.stackID(), running.err)
	}
	return out, err
}
