package clusters

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestWriting: a deploy that outlived its caller is found by its release
// until it ends, and then its channel is closed; the end of an earlier one
// leaves a later one of the same release in place.
func TestWriting(t *testing.T) {
	tests := []struct {
		name string
		// steps: "begin", "done" (of the earliest not yet ended).
		steps    []string
		wantBusy bool
	}{
		{"nothing running", nil, false},
		{"running", []string{"begin"}, true},
		{"ended", []string{"begin", "done"}, false},
		{"an earlier one ends, a later one runs", []string{"begin", "begin", "done"}, true},
		{"both ended", []string{"begin", "begin", "done", "done"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writing
			key := writingKey("magnum-p1", "demo-abc")
			var dones []func()
			var chans []<-chan struct{}
			for _, step := range tt.steps {
				switch step {
				case "begin":
					dones = append(dones, w.begin(key))
					chans = append(chans, w.of(key))
				case "done":
					dones[0]()
					select {
					case <-chans[0]:
					default:
						t.Fatal("an ended deploy's channel is still open")
					}
					dones, chans = dones[1:], chans[1:]
				}
			}
			if busy := w.of(key) != nil; busy != tt.wantBusy {
				t.Errorf("of(%s) running: %v, want %v", key, busy, tt.wantBusy)
			}
			if w.of(writingKey("magnum-p1", "other")) != nil {
				t.Error("another release is found running")
			}
		})
	}
}

// TestStillWritingErrorIsTheDeadline: the error an operation answers with
// when its deploy outlives it is classified as its context's end.
func TestStillWritingErrorIsTheDeadline(t *testing.T) {
	err := fmt.Errorf("creating: %w", &stillWritingError{stackID: "demo-abc", err: context.DeadlineExceeded})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v: not the deadline", err)
	}
}
