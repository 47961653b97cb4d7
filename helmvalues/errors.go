package helmvalues

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FieldError is bad input from the caller: a Magnum field, label or OpenStack
// fact that cannot become chart values. Field names the source the way a user
// sees it ("labels.boot_volume_size", "cluster_template.network_driver",
// "nodegroups[gpu].node_count"); Value is what was given; Expected says what
// would have been accepted.
type FieldError struct {
	Field    string
	Value    string
	Expected string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: invalid value %q: expected %s", e.Field, Clip(e.Value), e.Expected)
}

// maxQuoted is the most of a value an error message quotes.
const maxQuoted = 128

// Clip shortens a value quoted in an error message: messages end up in
// Magnum's status_reason and in logs, and a request may carry values of
// many kilobytes. A longer value keeps its first 64 bytes (whole UTF-8
// characters) and says how long it was.
func Clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// InvalidArgument marks the error as the caller's fault (gRPC InvalidArgument).
func (e *FieldError) InvalidArgument() bool { return true }

// ConfigError is a driver configuration problem: the operator, not the user,
// has to fix it, so it maps to FailedPrecondition rather than InvalidArgument.
type ConfigError struct {
	Field   string // e.g. "values.keystoneAuthURL"
	Value   string
	Problem string
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("driver configuration %s: %s", e.Field, e.Problem)
	}
	return fmt.Sprintf("driver configuration %s: invalid value %q: %s", e.Field, e.Value, e.Problem)
}

// FailedPrecondition marks the error as not applicable in the current
// deployment (gRPC FailedPrecondition).
func (e *ConfigError) FailedPrecondition() bool { return true }

// problems collects every error of one Build so the user sees all of them at
// once; each stays reachable through errors.As on the joined error.
type problems struct {
	errs []error
	seen map[string]bool
}

// once reports whether this exact problem is new: a value read in two
// places (the control plane and the workers) is reported once.
func (p *problems) once(key string) bool {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[key] {
		return false
	}
	p.seen[key] = true
	return true
}

func (p *problems) field(field, value, expected string) {
	if p.once("field\x00" + field + "\x00" + value + "\x00" + expected) {
		p.errs = append(p.errs, &FieldError{Field: field, Value: value, Expected: expected})
	}
}

func (p *problems) config(field, value, problem string) {
	if p.once("config\x00" + field + "\x00" + value + "\x00" + problem) {
		p.errs = append(p.errs, &ConfigError{Field: field, Value: value, Problem: problem})
	}
}

func (p *problems) add(err error) {
	if err != nil {
		p.errs = append(p.errs, err)
	}
}

func (p *problems) err() error {
	return errors.Join(p.errs...)
}

// OneLine renders an error, joined or not, on a single line: the messages of a
// joined error are separated by "; ". The render command prints it as the last
// line of its output.
func OneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Split(err.Error(), "\n"), "; ")
}
