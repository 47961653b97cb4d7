package capicontrollers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// pacer spaces the fake steps of each object by one step. Reconciles
// are triggered by every watch event, including the provider's own writes,
// so without it all the steps of an object would happen at once. It is
// keyed by UID and lives in memory: a restarted process starts afresh.
type pacer struct {
	step time.Duration
	now  func() time.Time

	mu sync.Mutex
	// next is, per object and per clock, when its next step is due. An
	// object has independent clocks, e.g. its provisioning steps and the
	// delay before it observes a new generation.
	next map[types.UID]map[string]time.Time
}

func newPacer(step time.Duration) *pacer {
	return &pacer{step: step, now: time.Now, next: map[types.UID]map[string]time.Time{}}
}

// wait returns how long the object must wait before its next step on the
// given clock, or 0 when it may take it now. An object seen for the first
// time waits one step: the real controllers take a while to react too.
func (p *pacer) wait(uid types.UID, clock string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	clocks := p.next[uid]
	if clocks == nil {
		clocks = map[string]time.Time{}
		p.next[uid] = clocks
	}
	next, ok := clocks[clock]
	if !ok {
		clocks[clock] = now.Add(p.step)
		return p.step
	}
	if d := next.Sub(now); d > 0 {
		return d
	}
	return 0
}

// stepped records that the object took a step now; its next one on this
// clock comes a step later.
func (p *pacer) stepped(uid types.UID, clock string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clocks := p.next[uid]
	if clocks == nil {
		clocks = map[string]time.Time{}
		p.next[uid] = clocks
	}
	clocks[clock] = p.now().Add(p.step)
}

// forget drops every clock of an object that is gone.
func (p *pacer) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.next, uid)
}

// schedule sets the object's next step on the clock d from now.
func (p *pacer) schedule(uid types.UID, clock string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clocks := p.next[uid]
	if clocks == nil {
		clocks = map[string]time.Time{}
		p.next[uid] = clocks
	}
	clocks[clock] = p.now().Add(d)
}

// due returns how long until the step scheduled on the clock, 0 when it is
// due or was never scheduled (as after a restart of the process).
func (p *pacer) due(uid types.UID, clock string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next, ok := p.next[uid][clock]; ok {
		return max(next.Sub(p.now()), 0)
	}
	return 0
}
