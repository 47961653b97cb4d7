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
