package clusters

import (
	"context"
	"fmt"
	"sync"

	"github.com/magnum-capi/magnum-capi/server/panics"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// Helm cannot be cancelled once it writes: release.Manager.Deploy returns
// when Helm has finished, which may be after the caller's deadline. A
// caller that gave up (the shim's deadline passed during a create under
// load) must still get an answer in time, and the cluster's Lease must be
// kept until Helm is done: a delete taking it next would uninstall a
// release whose MachineDeployment and control plane appeared after it,
// CAPI objects nothing ever deletes (TestReliabilityCreateDeadline).
//
// So an operation deploys in a goroutine of its own; when its context ends
// first it answers at once with a stillWritingError, and the deploy is
// recorded in Service.writing until it ends: giveBack keeps the Lease until
// then, and the status path says the release is still being written.

// stillWritingError: the caller's context ended while the release was being
// deployed; the deploy runs to its end in the background and its outcome is
// logged when it comes. The operation decides whether that is a failure: one
// past its point of no return reports it as under way (commit_gate.go).
type stillWritingError struct {
	stackID string
	err     error // the context's error
}

func (e *stillWritingError) Error() string {
	return fmt.Sprintf("deploying release %s: still running when the caller gave up, finishing in the background: %v", e.stackID, e.err)
}

func (e *stillWritingError) Unwrap() error { return e.err }

// writing are the deploys that outlived their caller, by namespace and
// release name.
type writing struct {
	mu      sync.Mutex
	running map[string]chan struct{}
}

// begin records a deploy of the release running on; done ends it.
func (w *writing) begin(key string) (done func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil {
		w.running = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	w.running[key] = ch
	return func() {
		w.mu.Lock()
		if w.running[key] == ch {
			delete(w.running, key)
		}
		w.mu.Unlock()
		close(ch)
	}
}

// of is closed when the deploy of the release that outlived its caller
// ends; nil when there is none.
func (w *writing) of(key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[key]
}

func writingKey(namespace, stackID string) string { return namespace + "/" + stackID }

// deployToTheEnd deploys the release with t, answering when ctx ends if the
// deploy has not by then.
func (s *Service) deployToTheEnd(ctx context.Context, op *operation, t release.Target, values map[string]any) (*release.Release, error) {
	type result struct {
		rel *release.Release
		err error
	}
	out := make(chan result, 1)
	go func() {
		var rel *release.Release
		err := panics.Run(ctx, s.logger(ctx), "clusters/deploy", func() (err error) {
			rel, err = s.releases.Deploy(ctx, t, op.stackID(), op.chart, values)
			return err
		})
		out <- result{rel, err}
	}()
	select {
	case r := <-out:
		return r.rel, r.err
	case <-ctx.Done():
	}
	done := s.writing.begin(writingKey(op.ns, op.stackID()))
	s.logger(ctx).WarnContext(ctx, "the caller gave up while Helm was writing; it runs to its end and the cluster's lease is kept until then", "stack_id", op.stackID())
	go s.background(ctx, "clusters/deployOutcome", func() {
		defer done()
		r := <-out
		s.logger(ctx).InfoContext(ctx, "the deploy its caller gave up on has finished", "stack_id", op.stackID(), "err", r.err)
	})
	return nil, &stillWritingError{stackID: op.stackID(), err: ctx.Err()}
}
