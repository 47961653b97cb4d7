// Package openstack is the sidecar's OpenStack adapter (gophercloud v2). Like
// gophercloud's packages it owns its types (types.go): it takes a Caller and
// Magnum's Objects and returns Facts and Credentials, and imports nothing of
// the sidecar's domain.
//
// Two identities, never mixed:
//
//   - the caller: Magnum's request token, passed through unchanged (validated
//     once with Keystone to read its catalog). Look-ups (images, networks,
//     volume types, flavors) and creating the cluster's application
//     credential act as the user, so they see what the user sees and
//     Keystone's "only the owner creates" rule holds.
//   - the service identity: a cloud in an operator's clouds.yaml (the
//     "magnum" service user). It deletes application credentials when no
//     user token exists (periodic status sync, cleanup). Keystone lets it
//     delete another user's credential only with the admin role (see
//     test/keystone's package comment for the policy).
//
// Errors carry behaviour methods for server/errors.go: bad references in
// Magnum fields are InvalidArgument and name the field and value; Keystone or
// a service being down, slow or answering 5xx is Unavailable; refused
// identities, missing catalog entries, configuration problems and
// credentials left behind are FailedPrecondition. No message carries a token
// or a credential secret.
package openstack
