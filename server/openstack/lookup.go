package openstack

import (
	"fmt"
	"regexp"
	"strings"
)

// uuidLike is the id format of Glance, Neutron and Cinder. A reference that
// looks like one is tried as an id first, then as a name (names may look
// like ids), as openstackclient's find_resource does.
var uuidLike = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

func notFound(field, value, what string) error {
	return &ReferenceError{Field: field, Value: value, Problem: fmt.Sprintf("no %s with this id or name is visible to the project", what)}
}

func ambiguous(field, value, what string, ids []string) error {
	return &ReferenceError{Field: field, Value: value, Problem: fmt.Sprintf(
		"%d %ss have this name (%s); use the id", len(ids), what, strings.Join(ids, ", "))}
}
