package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// panicked is a panic recovered in a goroutine of the sidecar
	// (server/panics.Error): a bug, whatever the panic's value says.
	panicked interface{ Panicked() bool }
)

// AppliedTrailer is the trailer key of a failed call whose change reached
// the management cluster all the same (an error with Applied() true, such
// as clusters.AppliedError): the shim then keeps Magnum's record of the
// change (magnum/magnum_capi/errors.py, APPLIED_TRAILER) instead of rolling
// it back. Its absence on an answer says nothing was changed.
const AppliedTrailer = "magnum-capi-applied"

// applied is an error whose operation changed the management cluster.
type applied interface{ Applied() bool }

// appliedOf reports whether err says its change was applied.
func appliedOf(err error) bool {
	var a applied
	return errors.As(err, &a) && a.Applied()
}

// userMessager is an error whose text is for the operator (it names a
// host, a pid, a URL) and that says what the user should read instead.
type userMessager interface{ UserMessage() string }

// managementAPIMessage is what the user reads when the management API is
// down: its error names the API server's URL. The interceptor logs the error
// itself with the request id.
const managementAPIMessage = "the management cluster's Kubernetes API is not answering"

// internalMessage is the whole of what the user reads of an error no class
// explains (a bug, a refusal nobody foresaw): its text is the operator's (it
// names hosts, URLs, ids), so the interceptor logs it under Magnum's request
// id and the shim tells the user to quote that id
// (magnum/magnum_capi/errors.py, INTERNAL).
const internalMessage = "the Cluster API driver failed unexpectedly"

// canceledMessage: the caller gave up; the error names what was being
// called (a URL) when it did.
const canceledMessage = "the call was cancelled before it finished"

// codeOf is the gRPC code for err.
func codeOf(err error) codes.Code {
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return s.Code()
	}
	if isPanic(err) {
		return codes.Internal
	}
	if c, ok := classOf(err); ok {
		return c
	}
	switch {
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case managementAPIDown(err):
		return codes.Unavailable
	case apierrors.IsForbidden(err):
		// The management cluster's RBAC or admission policy refused the
		// sidecar: its operator must fix that, a retry cannot.
		return codes.FailedPrecondition
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	}
	return codes.Internal
}

// classOf is the code of the class err declares, if any. Classes come
// first: an error that says what went wrong (a held lock, a syncing cache,
// OpenStack down) is more useful than the deadline it ran into.
func classOf(err error) (codes.Code, bool) {
	var (
		ia invalidArgument
		fp failedPrecondition
		nf notFound
		un unavailable
		ab aborted
	)
	switch {
	case errors.As(err, &ia) && ia.InvalidArgument():
		return codes.InvalidArgument, true
	case errors.As(err, &fp) && fp.FailedPrecondition():
		return codes.FailedPrecondition, true
	case errors.As(err, &nf) && nf.NotFound():
		return codes.NotFound, true
	case errors.As(err, &un) && un.Unavailable():
		return codes.Unavailable, true
	case errors.As(err, &ab) && ab.Aborted():
		return codes.Aborted, true
	}
	return codes.Unknown, false
}

// managementAPIDown reports whether err is the management cluster's API
// server not answering usefully: 5xx, 429, a server-side timeout, or a
// transport failure (refused, reset, closed early, no answer before the
// call's deadline). Retrying later can succeed, so it is Unavailable, not
// Internal. It is asked only of errors no adapter classified: OpenStack's
// and the chart repositories' transport failures carry their own class, so
// an unclassified one is the management API's (client-go, Helm's storage).
func managementAPIDown(err error) bool {
	if apiStatus := apierrors.APIStatus(nil); errors.As(err, &apiStatus) {
		code := apiStatus.Status().Code
		return code >= 500 || code == 429 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
	}
	// Not net.Error: context.DeadlineExceeded is one, and a deadline met
	// outside a request (waiting for a Lease, for Helm) is not an outage.
	var (
		urlErr *url.Error
		opErr  *net.OpError
	)
	return errors.As(err, &urlErr) || errors.As(err, &opErr) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

// userMessage is the status message for err with code c: the error's own
// text (it names the field, value and expectation for invalid arguments,
// and never carries secrets), except where that text is the operator's:
// an error that says what the user should read instead, and every error no
// class explains.
func userMessage(err error, c codes.Code) string {
	if isPanic(err) {
		return internalMessage
	}
	var um userMessager
	if errors.As(err, &um) {
		return um.UserMessage()
	}
	if _, classified := classOf(err); !classified {
		switch c {
		case codes.Unavailable:
			return managementAPIMessage
		case codes.Internal:
			return internalMessage
		case codes.Canceled:
			return canceledMessage
		}
		if apierrors.IsForbidden(err) {
			return forbiddenMessage(err)
		}
	}
	return err.Error()
}

// forbiddenMessage is what the user reads when the management cluster
// refused the sidecar (403): what was refused, in the API's own words for
// the kind of refusal, and who can fix it. The refusal's full text names
// the sidecar's identity and the namespace; the interceptor logs it.
func forbiddenMessage(err error) string {
	what := "a request"
	if apiStatus := apierrors.APIStatus(nil); errors.As(err, &apiStatus) {
		if d := apiStatus.Status().Details; d != nil && d.Kind != "" {
			what = d.Kind
			if d.Group != "" {
				what += "." + d.Group
			}
		}
	}
	why := "its RBAC does not allow it"
	msg := err.Error()
	if strings.Contains(msg, "attempting to grant RBAC permissions not currently held") {
		why = "it may not grant permissions it does not hold itself"
	} else if strings.Contains(msg, "ValidatingAdmissionPolicy") {
		// deploy/rbac's policies: the policy's own message names
		// namespaces, which stay in the log.
		why = "an admission policy does not allow it"
	} else if verb := forbiddenVerb.FindStringSubmatch(msg); verb != nil {
		why = "it may not " + verb[1] + " them"
	}
	return fmt.Sprintf("the management cluster refused the Cluster API driver (forbidden: %s): %s; "+
		"ask your cloud operator to apply the driver's RBAC (deploy/rbac)", what, why)
}

// forbiddenVerb finds the verb in the API server's RBAC refusal
// (`User "…" cannot create resource "leases" in API group …`).
var forbiddenVerb = regexp.MustCompile(`cannot ([a-z]+) resource`)

// statusError is the gRPC error for a domain error, which it keeps for the
// interceptor's log line (the status message may leave out what only the
// operator should read).
type statusError struct {
	st    *status.Status
	cause error
}

func (e *statusError) Error() string              { return e.st.Err().Error() }
func (e *statusError) GRPCStatus() *status.Status { return e.st }
func (e *statusError) Unwrap() error              { return e.cause }

// toStatus turns a domain error into the gRPC error the shim maps to a
// Magnum exception.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	c := codeOf(err)
	return &statusError{st: status.New(c, userMessage(err, c)), cause: err}
}

// isPanic reports whether err is, or wraps, a recovered panic.
func isPanic(err error) bool {
	var p panicked
	return errors.As(err, &p) && p.Panicked()
}

// panicStatus is the gRPC error for a recovered panic: Internal, with the
// fixed sentence and Magnum's request id, under which the interceptor logged
// the panic's stack; what the panic said stays in that log (it may name
// anything). Without a request id it is the plain sentence.
func panicStatus(err error, requestID string) error {
	msg := internalMessage
	if requestID != "" {
		msg = fmt.Sprintf("%s (a bug; the operator's log has it under request %s)", internalMessage, requestID)
	}
	return &statusError{st: status.New(codes.Internal, msg), cause: causeOf(err)}
}

// withRequestID answers a call that failed by a panic, here or in a
// goroutine of its operation, with panicStatus; any other error as it is.
func withRequestID(err error, requestID string) error {
	if err == nil || !isPanic(causeOf(err)) {
		return err
	}
	return panicStatus(err, requestID)
}

// causeOf is the domain error behind a status toStatus made, for the log.
func causeOf(err error) error {
	var se *statusError
	if errors.As(err, &se) {
		return se.cause
	}
	return err
}
