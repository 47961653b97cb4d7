// Package panics keeps a bug in one operation from taking the sidecar down:
// every goroutine the sidecar starts runs its work through Run (or defers
// Recover), which turns a panic into an *Error for that operation alone,
// logs the stack for the operator, and counts it in Total.
//
// It is a leaf: it imports no other package of the sidecar, so the domain
// and every adapter may use it (hack/lint-imports.sh leaf).
package panics

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Error is a panic recovered in the sidecar's own code. Its text is the
// operator's (the panic's value may name anything); the gRPC boundary
// (server/errors.go) answers it as Internal with a fixed message and the
// caller's request id. The stack went to the log when it was recovered.
type Error struct {
	// Where names the goroutine or step that panicked (the metric's label).
	Where string
	// Value is what was passed to panic.
	Value any
}

func (e *Error) Error() string { return fmt.Sprintf("panic in %s: %v", e.Where, e.Value) }

// Panicked marks the error for the gRPC boundary.
func (e *Error) Panicked() bool { return true }

// Unwrap keeps an error passed to panic reachable.
func (e *Error) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Total counts recovered panics by where they happened. It is the
// process's: every sidecar's metrics registry registers it (server/metrics).
var Total = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "magnum_capi", Name: "panics_total",
	Help: "Panics recovered in the sidecar (each failed only its own operation), by where they happened.",
}, []string{"where"})

// Run calls fn and returns its error; a panic in fn is returned as an
// *Error instead, after it is logged with its stack and counted.
func Run(ctx context.Context, log *slog.Logger, where string, fn func() error) (err error) {
	defer Recover(ctx, log, where, &err)
	return fn()
}

// Recover, deferred, turns a panic into an *Error in *err (when err is not
// nil), logs it with its stack and counts it. It must be deferred directly:
// recover works only there.
func Recover(ctx context.Context, log *slog.Logger, where string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	record(ctx, log, where, r)
	if err != nil {
		*err = &Error{Where: where, Value: r}
	}
}

// Report logs and counts a panic recovered elsewhere (the gRPC
// interceptor's own recover) and returns its *Error.
func Report(ctx context.Context, log *slog.Logger, where string, value any) *Error {
	record(ctx, log, where, value)
	return &Error{Where: where, Value: value}
}

func record(ctx context.Context, log *slog.Logger, where string, value any) {
	if log == nil {
		log = slog.Default()
	}
	Total.WithLabelValues(where).Inc()
	log.ErrorContext(ctx, "panic recovered; only its operation fails", "where", where,
		"panic", fmt.Sprint(value), "stack", string(debug.Stack()))
}

// Count is how many panics Total has counted at where: tests in the
// packages that recover read it.
func Count(where string) float64 {
	var m dto.Metric
	_ = Total.WithLabelValues(where).Write(&m)
	return m.GetCounter().GetValue()
}
