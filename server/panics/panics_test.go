package panics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestRunRecoversCountsAndLogs(t *testing.T) {
	sentinel := errors.New("sentinel")
	tests := []struct {
		name      string
		fn        func() error
		wantPanic bool
		wantIs    error
	}{
		{"returns nil", func() error { return nil }, false, nil},
		{"returns its error", func() error { return sentinel }, false, sentinel},
		{"panics with a string", func() error { panic("boom") }, true, nil},
		{"panics with an error", func() error { panic(sentinel) }, true, sentinel},
		{"panics with a nil map write", func() error { var m map[string]int; m["x"] = 1; return nil }, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where := "test/" + tt.name
			var logs bytes.Buffer
			before := Count(where)
			err := Run(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), where, tt.fn)
			var pe *Error
			if got := errors.As(err, &pe); got != tt.wantPanic {
				t.Fatalf("Run: %v; a panic error: %v, want %v", err, got, tt.wantPanic)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Run: %v, want it to wrap %v", err, tt.wantIs)
			}
			counted := Count(where) - before
			if want := map[bool]float64{true: 1, false: 0}[tt.wantPanic]; counted != want {
				t.Errorf("counted %v panics, want %v", counted, want)
			}
			if tt.wantPanic && (!pe.Panicked() || pe.Where != where || !strings.Contains(logs.String(), "panics_test.go")) {
				t.Errorf("error %+v, log %q: want where %q and the stack in the log", pe, logs.String(), where)
			}
		})
	}
}

// TestRecoverInAGoroutine: a goroutine that defers Recover hands its panic
// to whoever waits for it, and the process lives on.
func TestRecoverInAGoroutine(t *testing.T) {
	errc := make(chan error, 1)
	go func() {
		var err error
		defer func() { errc <- err }()
		defer Recover(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), "test/goroutine", &err)
		panic("in a goroutine")
	}()
	var pe *Error
	if err := <-errc; !errors.As(err, &pe) || pe.Value != "in a goroutine" {
		t.Fatalf("got %v, want the recovered panic", err)
	}
}
