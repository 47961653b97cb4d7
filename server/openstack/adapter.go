package openstack

import "github.com/magnum-capi/magnum-capi/server/clusters"

// The interface's types, under short names.
type (
	Caller     = clusters.Caller
	Facts      = clusters.Facts
	Credential = clusters.Credential
	Spec       = clusters.Spec
)

var _ clusters.OpenStack = (*Adapter)(nil)
