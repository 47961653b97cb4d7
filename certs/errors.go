package certs

import "fmt"

// InvalidError says which piece of CA material is unusable and why. It is the
// caller's (Magnum's) data that is wrong, so it is an invalid argument.
type InvalidError struct {
	// Field names the material, e.g. "certificates.etcd_ca.private_key".
	Field  string
	Reason string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// InvalidArgument classifies the error for the gRPC boundary.
func (e *InvalidError) InvalidArgument() bool { return true }
