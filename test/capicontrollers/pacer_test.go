package capicontrollers

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

func TestPacerSchedule(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPacer(100 * time.Millisecond)
	p.now = func() time.Time { return now }
	if d := p.due("a", "build"); d != 0 {
		t.Errorf("never scheduled: due in %s, want now", d)
	}
	p.schedule("a", "build", 3*time.Second)
	now = now.Add(time.Second)
	if d := p.due("a", "build"); d != 2*time.Second {
		t.Errorf("due in %s, want 2s", d)
	}
	now = now.Add(5 * time.Second)
	if d := p.due("a", "build"); d != 0 {
		t.Errorf("overdue: due in %s, want now", d)
	}
}
