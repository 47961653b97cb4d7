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
	// ForUser, when set, is the whole problem in the user's terms (a
	// version that is not one); otherwise the user reads a fixed sentence.
	ForUser string
}

func (e *ChartNotFoundError) Error() string {
	return fmt.Sprintf("chart %s version %s is not available from %s: %v", e.Name, e.Version, e.Source, e.Err)
}

func (e *ChartNotFoundError) Unwrap() error { return e.Err }

// UserMessage leaves out the repository's address and what it answered
// (the operator reads those in the log under the request id).
func (e *ChartNotFoundError) UserMessage() string {
	if e.ForUser != "" {
		return fmt.Sprintf("chart %s version %q: %s", e.Name, e.Version, e.ForUser)
	}
	return fmt.Sprintf("chart %s version %s is not available from the cloud's chart repository: "+
		"use a cluster template with a version it has, or ask your cloud operator to publish it", e.Name, e.Version)
}

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

// UserMessage names the chart, the versions that would work now and what
// to do, without the repository's address or the network error.
func (e *UnreachableError) UserMessage() string {
	cached := "none"
	if len(e.Cached) > 0 {
		cached = strings.Join(e.Cached, ", ")
	}
	return fmt.Sprintf("chart %s version %s is not in the driver's chart cache and the cloud's chart repository cannot be reached "+
		"(cached versions: %s): retry later or use a cluster template with a cached version, and tell your cloud operator if it persists",
		e.Name, e.Version, cached)
}

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

// UserMessage: the problem names digests and URLs of the repository, which
// are the operator's to read (in the log under the request id).
func (e *BadChartError) UserMessage() string {
	return fmt.Sprintf("chart %s version %s from the cloud's chart repository was rejected: it is not what the repository lists; "+
		"ask your cloud operator to fix the repository", e.Name, e.Version)
}
