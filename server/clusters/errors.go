package clusters

import "fmt"

// PreconditionError: the operation cannot apply to the cluster as it is;
// nothing was changed.
type PreconditionError struct{ Reason string }

func (e *PreconditionError) Error() string            { return e.Reason }
func (e *PreconditionError) FailedPrecondition() bool { return true }

func preconditionf(format string, args ...any) error {
	return &PreconditionError{Reason: fmt.Sprintf(format, args...)}
}

// AppliedError: the operation failed after its change reached the
// management cluster (it passed its point of no return, or could not be
// undone), so Magnum must record the change as made rather than roll its
// own record back. The wrapped error says what failed and keeps its class
// (and so its gRPC code); the gRPC layer marks the answer as applied.
type AppliedError struct {
	Change string // what is in the management cluster, for the operator's log
	Err    error
}

func (e *AppliedError) Error() string {
	return fmt.Sprintf("%s is in the management cluster; what followed failed: %v", e.Change, e.Err)
}

func (e *AppliedError) Unwrap() error { return e.Err }

// Applied marks the error for server/errors.go.
func (e *AppliedError) Applied() bool { return true }
