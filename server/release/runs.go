package release

import (
	"context"
	"fmt"
	"sync"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Helm's install and upgrade cannot be cancelled. Given a context that
// ends, RunWithContext returns at once but leaves its own goroutine creating
// the chart's objects, and marks the release failed although it then ends
// up deployed. A caller that gave up (the shim's deadline passed during a
// create under load) would release the cluster's Lease while objects were
// still being written, and a delete taking the Lease next would uninstall a
// release whose MachineDeployment and control plane appeared after it: CAPI
// objects nothing ever deletes, a cluster stuck in DELETE_IN_PROGRESS (seen
// in TestReliabilityCreateDeadline).
//
// So Deploy runs Helm to its end whatever the caller does, and Busy tells
// the holder of the cluster's Lease to keep it until then.

// runs tracks the Helm actions running in this process, by release.
type runs struct {
	mu      sync.Mutex
	running map[string]chan struct{}
}

func runKey(namespace, name string) string { return namespace + "/" + name }

// begin waits, within ctx, for an action on the release still running
// (the Lease normally prevents that; this covers a caller without one),
// then records a new one. done ends it.
func (r *runs) begin(ctx context.Context, namespace, name string) (done func(), err error) {
	key := runKey(namespace, name)
	for {
		r.mu.Lock()
		busy, ok := r.running[key]
		if !ok {
			if r.running == nil {
				r.running = map[string]chan struct{}{}
			}
			ch := make(chan struct{})
			r.running[key] = ch
			r.mu.Unlock()
			return func() {
				r.mu.Lock()
				delete(r.running, key)
				r.mu.Unlock()
				close(ch)
			}, nil
		}
		r.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the earlier Helm action on release %s to finish: %w", key, ctx.Err())
		}
	}
}

// busy is closed when the action on the release running now ends; nil
// when none is running.
func (r *runs) busy(namespace, name string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.running[runKey(namespace, name)]; ok {
		return ch
	}
	return nil
}

// Busy is closed when the Helm action on the release that is still running
// (its caller gave up) has finished; nil when none is running. Whoever
// holds the cluster's Lease keeps it until then.
func (m *Manager) Busy(namespace, name string) <-chan struct{} {
	return m.runs.busy(namespace, name)
}

// toTheEnd runs action, which must not be cancelled midway, to its end
// even when ctx ends first; the caller then gets ctx's error at once, and
// the outcome is logged when it comes.
func toTheEnd[T any](ctx context.Context, m *Manager, what string, action func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	out := make(chan result, 1)
	go func() {
		var v T
		err := panics.Run(ctx, m.log, "release/"+what, func() (err error) {
			v, err = action(context.WithoutCancel(ctx))
			return err
		})
		out <- result{v, err}
	}()
	select {
	case r := <-out:
		return r.v, r.err
	case <-ctx.Done():
		m.log.WarnContext(ctx, "the caller gave up while Helm was writing; it runs to its end and the cluster's lease is kept until then", "action", what)
		go func() {
			defer panics.Recover(ctx, m.log, "release/"+what+"Outcome", nil)
			r := <-out
			m.log.InfoContext(ctx, "the Helm action its caller gave up on has finished", "action", what, "err", r.err)
		}()
		var zero T
		return zero, &StillRunningError{Action: what, Err: ctx.Err()}
	}
}
