package release

import (
	"fmt"
	"strings"
)

// CacheDirError: the chart cache directory cannot be made or written, so
// the sidecar cannot start (the operator fixes the directory or the option).
type CacheDirError struct {
	Dir string
	Err error
}

func (e *CacheDirError) Error() string {
	return fmt.Sprintf("chart cache directory %s is not a writable directory: %v", e.Dir, e.Err)
}

func (e *CacheDirError) Unwrap() error { return e.Err }

// ChartNotFoundError: the source has no such chart version.
type ChartNotFoundError struct {
	Source, Name, Version string
	Err                   error
}

func (e *ChartNotFoundError) Error() string {
	return fmt.Sprintf("chart %s version %s is not available from %s: %v", e.Name, e.Version, e.Source, e.Err)
}

func (e *ChartNotFoundError) Unwrap() error { return e.Err }

// FailedPrecondition classifies the error: the template asks for a chart
// version the configured repository cannot supply.
func (e *ChartNotFoundError) FailedPrecondition() bool { return true }

// UnreachableError: the chart version is not cached and its repository
// cannot be reached. It is FailedPrecondition, not Unavailable: the sidecar
// itself is fine (Unavailable makes the shim retry and then blame the
// sidecar), nothing was changed, and the operation can only succeed once
// an operator brings the repository back or the template names a cached
// version; Magnum shows the message as is.
type UnreachableError struct {
	Source, Name, Version string
	// Cached are the versions this sidecar could install now.
	Cached []string
	Err    error
}

func (e *UnreachableError) Error() string {
	cached := "none"
	if len(e.Cached) > 0 {
		cached = strings.Join(e.Cached, ", ")
	}
	return fmt.Sprintf("chart %s version %s is not in the local chart cache and the repository %s cannot be reached (%v); cached versions: %s",
		e.Name, e.Version, e.Source, e.Err, cached)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// FailedPrecondition classifies the error (see the type's comment).
func (e *UnreachableError) FailedPrecondition() bool { return true }

// BadChartError: the repository served something other than what it
// promised (a digest or a name/version that does not match its index or
// manifest). Nothing is cached or installed; an operator must fix the
// repository.
type BadChartError struct {
	Source, Name, Version string
	Problem               string
}

func (e *BadChartError) Error() string {
	return fmt.Sprintf("chart %s version %s from %s rejected: %s", e.Name, e.Version, e.Source, e.Problem)
}

// FailedPrecondition classifies the error.
func (e *BadChartError) FailedPrecondition() bool { return true }
