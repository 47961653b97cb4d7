package capisim

import (
	"testing"
	"time"
)

func TestPacer(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPacer(100 * time.Millisecond)
	p.now = func() time.Time { return now }

	if d := p.wait("a", "x"); d != 100*time.Millisecond {
		t.Errorf("first sight waits %s, want a step", d)
	}
	now = now.Add(60 * time.Millisecond)
	if d := p.wait("a", "x"); d != 40*time.Millisecond {
		t.Errorf("waits %s, want the rest of the step", d)
	}
	if d := p.wait("a", "y"); d != 100*time.Millisecond {
		t.Errorf("another clock waits %s, want its own step", d)
	}
	now = now.Add(40 * time.Millisecond)
	if d := p.wait("a", "x"); d != 0 {
		t.Errorf("waits %s once the step is over", d)
	}
	p.stepped("a", "x")
	if d := p.wait("a", "x"); d != 100*time.Millisecond {
		t.Errorf("after a step waits %s, want a step", d)
	}
	p.forget("a")
	if len(p.next) != 0 {
		t.Errorf("forget left %v", p.next)
	}
}

func TestExpectations(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newExpectations()
	e.now = func() time.Time { return now }
	cache := map[string]bool{} // name → deleting
	present := func(name string) (bool, bool) { d, ok := cache[name]; return ok, d }

	if !e.satisfied("owner", present) {
		t.Error("nothing expected, yet not satisfied")
	}
	e.expectCreated("owner", "m1")
	if e.satisfied("owner", present) {
		t.Error("satisfied before the cache shows the creation")
	}
	cache["m1"] = false
	if !e.satisfied("owner", present) {
		t.Error("not satisfied once the cache shows the creation")
	}
	e.expectDeleted("owner", "m1")
	if e.satisfied("owner", present) {
		t.Error("satisfied while the cache shows the Machine alive")
	}
	cache["m1"] = true
	if !e.satisfied("owner", present) {
		t.Error("not satisfied once the cache shows the deletion")
	}
	e.expectCreated("owner", "lost")
	now = now.Add(time.Minute)
	if !e.satisfied("owner", present) {
		t.Error("an expectation never met must expire")
	}
}
