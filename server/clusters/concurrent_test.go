package clusters

import (
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
)

// TestAllOf: every step runs even when another fails, and the error is a
// failing step's (the first to fail, errgroup's rule).
func TestAllOf(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	tests := []struct {
		name  string
		steps []error
		want  []error // any of them; none when empty
	}{
		{"none", nil, nil},
		{"all succeed", []error{nil, nil, nil}, nil},
		{"one fails", []error{nil, errB, nil}, []error{errB}},
		{"two fail: one of them", []error{nil, errA, errB}, []error{errA, errB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int32
			fns := make([]func() error, len(tt.steps))
			for i, err := range tt.steps {
				fns[i] = func() error { ran.Add(1); return err }
			}
			got := allOf(t.Context(), slog.New(slog.DiscardHandler), fns...)
			if (got == nil) != (len(tt.want) == 0) || (got != nil && !slices.Contains(tt.want, got)) {
				t.Errorf("allOf = %v, want one of %v", got, tt.want)
			}
			if int(ran.Load()) != len(tt.steps) {
				t.Errorf("%d of %d steps ran", ran.Load(), len(tt.steps))
			}
		})
	}
}
