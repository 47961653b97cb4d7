package openstack

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// uuidLike is the id format of Glance, Neutron and Cinder. A reference that
// looks like one is tried as an id first, then as a name (names may look
// like ids), as openstackclient's find_resource does.
var uuidLike = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// finder resolves a reference to one object of a kind the way
// openstackclient's find_resource does: as an id when it looks like one (an
// id that is not found is tried as a name), else as a name that must match
// exactly one object the caller can see.
type finder[T any] struct {
	service string // the service, in errors: "image", "network"
	kind    string // what is looked for, in errors: "image", "subnet", "external network"
	get     func(ctx context.Context, id string) (T, error)
	named   func(name string) pagination.Pager
	extract func(pagination.Page) ([]T, error)
	id      func(T) string
}

// find resolves ref, the value of field; a reference nothing or more than
// one object answers to is a ReferenceError naming field.
func (f finder[T]) find(ctx context.Context, field, ref string) (T, error) {
	var zero T
	if uuidLike.MatchString(ref) {
		v, err := f.get(ctx, ref)
		if err == nil {
			return v, nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return zero, apiError(ctx, f.service, "get "+f.kind+" "+ref, callerToken, err)
		}
	}
	found, err := listAll(ctx, f.named(ref), f.service, f.kind, " named "+ref, f.extract)
	if err != nil {
		return zero, err
	}
	switch len(found) {
	case 0:
		return zero, notFound(field, ref, f.kind)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, v := range found {
		ids[i] = f.id(v)
	}
	return zero, ambiguous(field, ref, f.kind, ids)
}

// value is the object a gophercloud Get's Extract returned, for a finder.
func value[T any](v *T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return *v, nil
}

// listAll reads every page of a list call with the caller's token; noun
// names what is listed in errors ("list <noun>s<detail>", "reading the
// <noun> list").
func listAll[T any](ctx context.Context, pager pagination.Pager, service, noun, detail string, extract func(pagination.Page) ([]T, error)) ([]T, error) {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return nil, apiError(ctx, service, "list "+noun+"s"+detail, callerToken, err)
	}
	found, err := extract(page)
	if err != nil {
		return nil, fmt.Errorf("openstack %s: reading the %s list: %w", service, noun, err)
	}
	return found, nil
}

func notFound(field, value, what string) error {
	return &ReferenceError{Field: field, Value: value, Problem: fmt.Sprintf("no %s with this id or name is visible to the project", what)}
}

func ambiguous(field, value, what string, ids []string) error {
	return &ReferenceError{Field: field, Value: value, Problem: fmt.Sprintf(
		"%d %ss have this name (%s); use the id", len(ids), what, strings.Join(ids, ", "))}
}
