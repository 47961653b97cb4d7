package clusters

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
)

// TestAllOf: every step runs even when another fails, and the error is the
// first failing step's in the order given.
func TestAllOf(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	tests := []struct {
		name  string
		steps []error
		want  error
	}{
		{"none", nil, nil},
		{"all succeed", []error{nil, nil, nil}, nil},
		{"one fails", []error{nil, errB, nil}, errB},
		{"two fail: the first in order", []error{nil, errA, errB}, errA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int32
			fns := make([]func() error, len(tt.steps))
			for i, err := range tt.steps {
				fns[i] = func() error { ran.Add(1); return err }
			}
			if got := allOf(t.Context(), slog.New(slog.DiscardHandler), fns...); !errors.Is(got, tt.want) || (tt.want == nil && got != nil) {
				t.Errorf("allOf = %v, want %v", got, tt.want)
			}
			if int(ran.Load()) != len(tt.steps) {
				t.Errorf("%d of %d steps ran", ran.Load(), len(tt.steps))
			}
		})
	}
}
