package openstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"

	"github.com/gophercloud/gophercloud/v2"
)

// ReferenceError is a Magnum field that names something OpenStack does not
// have, has several of, or that cannot be used (an image without
// kube_version). The user fixes it, so it is InvalidArgument.
type ReferenceError struct {
	Field   string // as the user sees it: cluster_template.image_id, cluster.fixed_network
	Value   string
	Problem string
}

func (e *ReferenceError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Problem)
}

// InvalidArgument marks the caller's fault.
func (e *ReferenceError) InvalidArgument() bool { return true }

// UnavailableError is OpenStack not answering usefully: a connection
// refused or reset, a timeout, 5xx or 429. Retrying later can succeed.
type UnavailableError struct {
	Service string // identity, image, network, volumev3, compute
	Op      string // what was being done
	Detail  string // status and the service's message, or the network error
	Err     error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("OpenStack %s service unavailable (%s): %s", e.Service, e.Op, e.Detail)
}

// UserMessage is the error's text without what the sidecar was doing
// around it (the log has that): it names OpenStack's service, never its
// endpoint.
func (e *UnavailableError) UserMessage() string { return e.Error() }

// Unavailable marks a transient failure.
func (e *UnavailableError) Unavailable() bool { return true }

func (e *UnavailableError) Unwrap() error { return e.Err }

// AuthError is Keystone refusing an identity: the caller's token (expired,
// revoked, unscoped, another project) or the service identity (wrong
// password, disabled user). Retrying the same request cannot help.
type AuthError struct {
	Identity string // "the caller's token" or "the service identity (cloud magnum)"
	Problem  string
	Err      error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s was refused: %s", e.Identity, e.Problem)
}

// FailedPrecondition marks a state the request cannot change.
func (e *AuthError) FailedPrecondition() bool { return true }

func (e *AuthError) Unwrap() error { return e.Err }

// CredentialError is an application credential operation that could not be
// done. Left says the credential still exists in Keystone, so the operator
// knows to delete it by hand.
type CredentialError struct {
	ID      string
	Name    string // empty when Keystone did not say
	Op      string // create, delete
	Problem string
	Left    bool
	Err     error
}

func (e *CredentialError) Error() string {
	what := "application credential"
	if e.ID != "" {
		what += " " + e.ID
	}
	if e.Name != "" {
		what += fmt.Sprintf(" (%s)", e.Name)
	}
	if e.Left {
		return fmt.Sprintf("%s was not deleted and is left in Keystone: %s", what, e.Problem)
	}
	return fmt.Sprintf("%s: %s failed: %s", what, e.Op, e.Problem)
}

// FailedPrecondition marks a state the request cannot change (a missing
// role, a credential that belongs to something else).
func (e *CredentialError) FailedPrecondition() bool { return true }

func (e *CredentialError) Unwrap() error { return e.Err }

// ConfigError is the operator's configuration (or the cloud's catalog) not
// allowing the operation.
type ConfigError struct {
	Field   string // openstack.cloudsFile, catalog
	Value   string
	Problem string
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("openstack configuration %s: %s", e.Field, e.Problem)
	}
	return fmt.Sprintf("openstack configuration %s %q: %s", e.Field, e.Value, e.Problem)
}

// FailedPrecondition marks an operator problem.
func (e *ConfigError) FailedPrecondition() bool { return true }

// UserMessage names the setting, not its value or the problem: both name
// the operator's files and endpoints (the log has them, with the request id).
func (e *ConfigError) UserMessage() string {
	if e.Field == "catalog" {
		return fmt.Sprintf("the cloud's Keystone catalog has no %s endpoint the Cluster API driver can use: ask your cloud operator", e.Value)
	}
	return fmt.Sprintf("the Cluster API driver's OpenStack setting %s is not usable: ask your cloud operator to fix it", e.Field)
}

// CloudsYAMLError is a cluster's clouds.yaml (read back from its Secret)
// without a usable application credential id.
type CloudsYAMLError struct{ Problem string }

func (e *CloudsYAMLError) Error() string {
	return "cloud credentials clouds.yaml: " + e.Problem
}

// FailedPrecondition: the stored Secret, not the request, is wrong.
func (e *CloudsYAMLError) FailedPrecondition() bool { return true }

// apiError turns a gophercloud or network error into one of the classes.
// Statuses the caller handles itself (404 for a look-up, 403 for a delete)
// are checked before calling it. ctx decides whether a deadline was the
// caller's cancellation (returned as is) or OpenStack's slowness
// (Unavailable).
func apiError(ctx context.Context, service, op, identity string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The sidecar answers before the caller's deadline (its handlers'
		// context ends first), so this is OpenStack not answering in time.
		return &UnavailableError{Service: service, Op: op, Detail: "no answer within the call's time", Err: err}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("openstack %s (%s): %w", service, op, err)
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		detail := fmt.Sprintf("HTTP %d", code.Actual)
		if msg := remoteMessage(code.Body); msg != "" {
			detail += ": " + msg
		}
		switch {
		case code.Actual == http.StatusUnauthorized:
			return &AuthError{Identity: identity, Problem: fmt.Sprintf("%s answered %s while trying to %s", service, detail, op), Err: err}
		case code.Actual == http.StatusForbidden:
			return &AuthError{Identity: identity, Problem: fmt.Sprintf("not allowed to %s (%s %s)", op, service, detail), Err: err}
		case code.Actual == http.StatusTooManyRequests || code.Actual >= 500:
			return &UnavailableError{Service: service, Op: op, Detail: detail, Err: err}
		}
		return &unexpectedError{msg: fmt.Sprintf("openstack %s (%s): unexpected %s", service, op, detail), err: err}
	}
	var notFound *gophercloud.ErrEndpointNotFound
	if errors.As(err, &notFound) {
		return &ConfigError{Field: "catalog", Value: service, Problem: "no such endpoint in the Keystone catalog for this region and interface"}
	}
	if isNetworkError(err) {
		return &UnavailableError{Service: service, Op: op, Detail: networkDetail(err), Err: err}
	}
	return fmt.Errorf("openstack %s (%s): %w", service, op, err)
}

// unexpectedError is an answer no class fits (a 400 or 409 the code did not
// expect): an internal error. Its message is the service's, not
// gophercloud's, which quotes the whole body.
type unexpectedError struct {
	msg string
	err error
}

func (e *unexpectedError) Error() string { return e.msg }
func (e *unexpectedError) Unwrap() error { return e.err }

// isNetworkError is a failure to talk to the endpoint at all: refused,
// reset, timed out, closed early.
func isNetworkError(err error) bool {
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded)
}

// networkDetail says what went wrong without the endpoint's URL or host
// name (the message reaches tenants; the log has the whole error).
func networkDetail(err error) string {
	var (
		netErr net.Error
		dnsErr *net.DNSError
	)
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.As(err, &dnsErr):
		return "its endpoint's host name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before an answer"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Err.Error()
	}
	return "connection failed"
}

var (
	htmlTag    = regexp.MustCompile(`<[^>]*>`)
	whitespace = regexp.MustCompile(`\s+`)
)

// maxMessage bounds a service's message quoted in an error.
const maxMessage = 240

// remoteMessage is the human part of an OpenStack error body: the
// "message" of Keystone's, Neutron's or Nova/Cinder's JSON envelope, or the
// text of a webob/HAProxy HTML page.
func remoteMessage(body []byte) string {
	var envelope map[string]json.RawMessage
	msg := ""
	if json.Unmarshal(body, &envelope) == nil {
		for _, raw := range envelope {
			var inner struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(raw, &inner) == nil && inner.Message != "" {
				msg = inner.Message
				break
			}
		}
	} else {
		msg = htmlTag.ReplaceAllString(string(body), " ")
	}
	msg = strings.TrimSpace(whitespace.ReplaceAllString(msg, " "))
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "..."
	}
	return msg
}
