package openstack

import (
	"context"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// ClusterCredentials lists, with the service identity, every application
// credential named for the cluster (magnum-<cluster uuid>-...) of any user
// with a role on the cluster's project, and of the cluster's creator: an
// interrupted create or rotation by any of them, or a rotation whose delete
// of the old credential failed, left one there that the Secret no longer
// holds, and only its name says whose it is. Keystone has no search by
// name across users, so this costs one request for the project's role
// assignments and one per user. It needs the admin role (as deleting them
// does).
func (a *Adapter) ClusterCredentials(ctx context.Context, cluster helmvalues.Cluster) ([]CredentialRef, error) {
	if cluster.UUID == "" || cluster.ProjectID == "" {
		return nil, &ReferenceError{Field: "cluster.uuid", Value: cluster.UUID, Problem: "the cluster's uuid and project are required: they name its application credentials"}
	}
	pc, err := a.serviceClient(ctx)
	if err != nil {
		return nil, err
	}
	identity, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return nil, err
	}
	users, err := projectUsers(ctx, identity, cluster.ProjectID)
	if err != nil {
		return nil, a.listError(ctx, "list the project's role assignments", err)
	}
	if cluster.UserID != "" {
		users[cluster.UserID] = true
	}
	prefix := credentialPrefix(cluster.UUID) + "-"
	var out []CredentialRef
	for _, user := range sortedKeys(users) {
		all, err := listAll(ctx, applicationcredentials.List(identity, user, applicationcredentials.ListOpts{}),
			"identity", "application credential", " of user "+user, applicationcredentials.ExtractApplicationCredentials)
		if err != nil {
			return nil, err
		}
		for _, ac := range all {
			if strings.HasPrefix(ac.Name, prefix) {
				out = append(out, CredentialRef{ID: ac.ID, Name: ac.Name, UserID: user})
			}
		}
	}
	return out, nil
}

// projectUsers are the users with a role on project, directly or through
// a group (Keystone's effective assignments).
func projectUsers(ctx context.Context, identity *gophercloud.ServiceClient, project string) (map[string]bool, error) {
	effective := true
	pages, err := roles.ListAssignments(identity, roles.ListAssignmentsOpts{ScopeProjectID: project, Effective: &effective}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	assignments, err := roles.ExtractRoleAssignments(pages)
	if err != nil {
		return nil, err
	}
	users := map[string]bool{}
	for _, ra := range assignments {
		if ra.User.ID != "" {
			users[ra.User.ID] = true
		}
	}
	return users, nil
}

// listError classifies a failed listing with the service identity.
func (a *Adapter) listError(ctx context.Context, op string, err error) error {
	return apiError(ctx, "identity", op, a.serviceIdentity(), err)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
