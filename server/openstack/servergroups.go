package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
)

// serverGroupMicroversion is the Nova API version server groups are made
// and read with. 2.15 is the first that accepts the soft-affinity and
// soft-anti-affinity policies; from 2.64 the request and answer carry
// `policy` and `rules` instead of the `policies` list. 2.15 is enough for
// every policy the driver offers, is served by every Nova since Mitaka, and
// keeps one body shape (`policies`) for create and list.
const serverGroupMicroversion = "2.15"

// ServerGroup is a Nova server group as the adapter returns it.
type ServerGroup struct {
	ID, Name string
	// Policy is the group's one policy (Nova before 2.64 answers a list of
	// exactly one).
	Policy  string
	Members []string
}

// QuotaError is OpenStack refusing to make something because the project's
// quota is used up. The user (or the cloud's operator) must free or raise
// the quota; retrying the same request cannot help.
type QuotaError struct {
	Service string // compute
	Quota   string // Nova's quota name: server_groups
	What    string // what was being made, in words
	Err     error
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("OpenStack %s quota %s exceeded: could not create %s; delete unused ones or ask the cloud operator to raise the project's %s quota",
		e.Service, e.Quota, e.What, e.Quota)
}

// UserMessage is the whole of what the tenant reads: Error's text, which
// names no URL or id, without what wrapped it.
func (e *QuotaError) UserMessage() string { return e.Error() }

// FailedPrecondition marks a state the request cannot change.
func (e *QuotaError) FailedPrecondition() bool { return true }

func (e *QuotaError) Unwrap() error { return e.Err }

// novaForCaller is a compute client as the caller, at the server group
// microversion.
func (a *Adapter) novaForCaller(ctx context.Context, caller Caller) (*gophercloud.ServiceClient, error) {
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return nil, err
	}
	nova, err := a.serviceFor(ctx, "compute", func() (*gophercloud.ServiceClient, error) {
		return openstack.NewComputeV2(sess.pc, a.endpointOpts(caller))
	})
	if err != nil {
		return nil, err
	}
	nova.Microversion = serverGroupMicroversion
	return nova, nil
}

// listServerGroups is the project's server groups with one of names, by
// name, in Nova's order (creation order). Nova does not keep names unique.
func listServerGroups(ctx context.Context, nova *gophercloud.ServiceClient, names []string) (map[string][]ServerGroup, error) {
	all, err := listAll(ctx, servergroups.List(nova, servergroups.ListOpts{}), "compute", "server group", " of the project", servergroups.ExtractServerGroups)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, n := range names {
		wanted[n] = true
	}
	out := map[string][]ServerGroup{}
	for _, g := range all {
		if wanted[g.Name] {
			out[g.Name] = append(out[g.Name], serverGroupOf(g))
		}
	}
	return out, nil
}

func serverGroupOf(g servergroups.ServerGroup) ServerGroup {
	sg := ServerGroup{ID: g.ID, Name: g.Name, Members: g.Members}
	switch {
	case g.Policy != nil:
		sg.Policy = *g.Policy
	case len(g.Policies) > 0:
		sg.Policy = g.Policies[0]
	}
	return sg
}

// EnsureServerGroups finds or makes one server group per name, as the
// caller, with policy for those it makes, and returns them by name.
//
// Idempotent: Nova has no metadata on server groups, so a group is found by
// its name in the project; a retry after a crash finds the group the first
// attempt made. Where several have one name (two creates raced, or a create
// whose answer was lost was retried by gophercloud), the one with the most
// members (else the first made) is kept and the empty others are deleted.
// An existing group keeps its policy even when policy differs: changing a
// group means a new one, which would replace every machine in it.
func (a *Adapter) EnsureServerGroups(ctx context.Context, caller Caller, policy string, names []string) (map[string]ServerGroup, error) {
	nova, err := a.novaForCaller(ctx, caller)
	if err != nil {
		return nil, err
	}
	found, err := listServerGroups(ctx, nova, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ServerGroup, len(names))
	for _, name := range names {
		if groups := found[name]; len(groups) > 0 {
			out[name] = a.keepOne(ctx, nova, groups)
			continue
		}
		g, err := servergroups.Create(ctx, nova, servergroups.CreateOpts{Name: name, Policies: []string{policy}}).Extract()
		if err != nil {
			return nil, serverGroupError(ctx, "create a server group", err)
		}
		a.log.InfoContext(ctx, "server group created", "name", name, "id", g.ID, "policy", policy, "request_id", caller.RequestID)
		out[name] = serverGroupOf(*g)
	}
	return out, nil
}

// keepOne chooses the group to use among groups of one name and deletes
// the duplicates that have no members (one with members is left alone: its
// servers' scheduling refers to it; it goes with the cluster).
func (a *Adapter) keepOne(ctx context.Context, nova *gophercloud.ServiceClient, groups []ServerGroup) ServerGroup {
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].Members) > len(groups[j].Members) })
	for _, dup := range groups[1:] {
		if len(dup.Members) > 0 {
			a.log.WarnContext(ctx, "duplicate server group with members left in place", "name", dup.Name, "id", dup.ID, "kept", groups[0].ID)
			continue
		}
		err := servergroups.Delete(ctx, nova, dup.ID).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			a.log.WarnContext(ctx, "deleting a duplicate server group failed", "name", dup.Name, "id", dup.ID, "err", err)
			continue
		}
		a.log.InfoContext(ctx, "duplicate server group deleted", "name", dup.Name, "id", dup.ID, "kept", groups[0].ID)
	}
	return groups[0]
}

// DeleteServerGroups deletes every server group of the project named one
// of names, as the caller, and returns how many it deleted. A group already
// gone (404) counts as deleted. Nova lets a group with members be deleted;
// its servers keep running.
//
// Idempotent: a retry lists what is left and finds nothing.
func (a *Adapter) DeleteServerGroups(ctx context.Context, caller Caller, names []string) (int, error) {
	if len(names) == 0 {
		return 0, nil
	}
	nova, err := a.novaForCaller(ctx, caller)
	if err != nil {
		return 0, err
	}
	found, err := listServerGroups(ctx, nova, names)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		for _, g := range found[name] {
			err := servergroups.Delete(ctx, nova, g.ID).ExtractErr()
			if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
				return n, serverGroupError(ctx, "delete a server group", err)
			}
			n++
			a.log.InfoContext(ctx, "server group deleted", "name", name, "id", g.ID, "request_id", caller.RequestID)
		}
	}
	return n, nil
}

// serverGroupError classifies a failed server group call: Nova's 403 for
// the server_groups quota is a QuotaError, anything else is apiError's.
func serverGroupError(ctx context.Context, op string, err error) error {
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) && code.Actual == http.StatusForbidden && isQuotaRefusal(remoteMessage(code.Body)) {
		return &QuotaError{Service: "compute (Nova)", Quota: "server_groups", What: "a server group for the cluster", Err: err}
	}
	return apiError(ctx, "compute", op, callerToken, err)
}

// isQuotaRefusal recognises Nova's over-quota messages: "Quota exceeded,
// too many server groups." (nova/api/openstack/compute/server_groups.py)
// and the unified-limits one, "... server_groups ... exceeded".
func isQuotaRefusal(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "quota exceeded") || (strings.Contains(m, "server_groups") && strings.Contains(m, "exceed"))
}
