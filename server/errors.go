package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error classes are behaviours, not types: a package marks its errors with
// one of these methods and this file, alone, turns them into codes. Wrapped
// errors are found through errors.As.
type (
	invalidArgument    interface{ InvalidArgument() bool }
	failedPrecondition interface{ FailedPrecondition() bool }
	notFound           interface{ NotFound() bool }
	unavailable        interface{ Unavailable() bool }
	aborted            interface{ Aborted() bool }
)

// codeOf is the gRPC code for err.
func codeOf(err error) codes.Code {
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code()
	}
	var (
		ia invalidArgument
		fp failedPrecondition
		nf notFound
		un unavailable
		ab aborted
	)
	// Classes first: an error that says what went wrong (a held lock, a
	// syncing cache) is more useful than the deadline it ran into.
	switch {
	case errors.As(err, &ia) && ia.InvalidArgument():
		return codes.InvalidArgument
	case errors.As(err, &fp) && fp.FailedPrecondition():
		return codes.FailedPrecondition
	case errors.As(err, &nf) && nf.NotFound():
		return codes.NotFound
	case errors.As(err, &un) && un.Unavailable():
		return codes.Unavailable
	case errors.As(err, &ab) && ab.Aborted():
		return codes.Aborted
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	}
	return codes.Internal
}

// toStatus turns a domain error into the gRPC error the shim maps to a
// Magnum exception. The message is the error's own text: it names the field,
// value and expectation for invalid arguments, and never carries secrets.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	return status.Error(codeOf(err), err.Error())
}
