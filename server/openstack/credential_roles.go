package openstack

import (
	"fmt"
	"strings"
	"time"
)

// credentialRoles picks, from the roles of the caller's token (held), those
// the operator allows (wanted), in the token's spelling; Keystone refuses a
// credential with a role the token does not carry. Names match case
// insensitively, as Keystone's role names do. An empty wanted list means
// every role of the token (Keystone's own default).
func credentialRoles(wanted, held []string) ([]string, error) {
	if len(wanted) == 0 {
		return nil, nil
	}
	allowed := map[string]bool{}
	for _, w := range wanted {
		allowed[strings.ToLower(w)] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range held {
		if k := strings.ToLower(h); allowed[k] && !seen[k] {
			out = append(out, h)
			seen[k] = true
		}
	}
	if len(out) == 0 {
		return nil, &CredentialError{Op: "create", Problem: fmt.Sprintf(
			"the user's token carries none of the roles a cluster's credential may get (%s; it has %s): the user needs one of them on the project",
			strings.Join(wanted, ", "), first(strings.Join(held, ", "), "none"))}
	}
	return out, nil
}

// credentialExpiry is when a credential made at now with lifetime expires;
// nil (never) for a lifetime of 0.
func credentialExpiry(now time.Time, lifetime time.Duration) *time.Time {
	if lifetime <= 0 {
		return nil
	}
	t := now.Add(lifetime).UTC().Truncate(time.Second)
	return &t
}
