package capistatus

import "fmt"

// ObjectError says which object of a snapshot is invalid and why. It is the
// caller's fault (a malformed object), so it answers InvalidArgument.
type ObjectError struct {
	Kind, Namespace, Name string
	Err                   error
}

func (e *ObjectError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + e.Name
	}
	if name == "" {
		name = "(no name)"
	}
	return fmt.Sprintf("%s %s: %v", e.Kind, name, e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

// InvalidArgument marks the error as the caller's: server/errors.go maps it to
// codes.InvalidArgument and the CLI exits 2.
func (e *ObjectError) InvalidArgument() bool { return true }

// InvalidRequestError is a Request field that cannot be used.
type InvalidRequestError struct {
	Field, Value, Expected string
}

func (e *InvalidRequestError) Error() string {
	return fmt.Sprintf("%s: %q, expected %s", e.Field, e.Value, e.Expected)
}

// InvalidArgument marks the error as the caller's.
func (e *InvalidRequestError) InvalidArgument() bool { return true }
