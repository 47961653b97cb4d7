package clusters

import (
	"errors"
	"testing"
)

// TestCommitGate: the gate decides once. A write that reaches it first runs
// prepare and commits (or is refused with prepare's error, every later
// write too); closed first, it refuses every later write, so an operation
// told "not committed" stays so.
func TestCommitGate(t *testing.T) {
	errPrepare := errors.New("prepare failed")
	tests := []struct {
		name                     string
		prepare                  error
		writes, writesAfterShut  int
		wantCommitted, wantTried bool
		wantWriteErr             error
	}{
		{"closed before any write: refused after", nil, 0, 2, false, false, errGateClosed},
		{"first write commits; later writes pass", nil, 3, 1, true, true, nil},
		{"prepare fails: refused, never committed", errPrepare, 2, 1, false, true, errPrepare},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := 0
			g := &commitGate{prepare: func() error { ran++; return tt.prepare }}
			var last error
			for range tt.writes {
				last = g.pass()
			}
			committed, tried := g.close()
			for range tt.writesAfterShut {
				last = g.pass()
			}
			if committed != tt.wantCommitted || tried != tt.wantTried {
				t.Errorf("close() = committed %v, tried %v; want %v, %v", committed, tried, tt.wantCommitted, tt.wantTried)
			}
			if !errors.Is(last, tt.wantWriteErr) {
				t.Errorf("the last write got %v, want %v", last, tt.wantWriteErr)
			}
			if ran > 1 {
				t.Errorf("prepare ran %d times, want at most once", ran)
			}
		})
	}
}
