package openstack

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/keystone"
)

// limitedAdapter is an adapter whose clusters' credentials may get only
// roles, for lifetime, with a service identity of its own.
func limitedAdapter(t *testing.T, k *keystone.Keystone, roles []string, lifetime time.Duration) *Adapter {
	t.Helper()
	ctx := context.Background()
	sfx := suffix()
	service, err := k.CreateProject(ctx, "service-"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := k.CreateUser(ctx, "magnum-limited-"+sfx, service, "admin")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := k.WriteCloudsYAML(path, "magnum", u); err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{CloudsFile: path, Cloud: "magnum", Region: keystone.Region, Timeout: time.Minute, SkipFlavorCheck: true,
		CredentialRoles: roles, CredentialLifetime: lifetime}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// callerWith is a caller (token, cluster) of a new user holding role on a
// new project.
func callerWith(t *testing.T, k *keystone.Keystone, role string) (keystone.User, Caller) {
	t.Helper()
	ctx := context.Background()
	sfx := suffix()
	project, err := k.CreateProject(ctx, "roles-"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	user, err := k.CreateUser(ctx, "roles-"+sfx, project, role)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Token(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	caller := Caller{AuthToken: tok.ID, AuthURL: k.AuthURL, UserID: user.ID, ProjectID: project.ID, RegionName: keystone.Region, RequestID: "req-" + sfx}
	return user, caller
}

// TestCredentialRolesAndExpiryInKeystone: against the real Keystone, a
// project admin's cluster credential carries only the allowed roles it
// holds (member, not admin), expires when configured, and logs in; a user
// holding none of the allowed roles gets a FailedPrecondition naming them
// and nothing is made; "every role" (no list) keeps the admin role.
func TestCredentialRolesAndExpiryInKeystone(t *testing.T) {
	ctx := context.Background()
	k := sharedKeystone.Get(t)
	limited := limitedAdapter(t, k, []string{"member", "load-balancer_member"}, 48*time.Hour)

	user, caller := callerWith(t, k, "admin")
	cluster := clusterFor(caller, user)
	cred, err := limited.CreateCredential(ctx, caller, cluster)
	if err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	got, err := applicationcredentials.Get(ctx, k.Admin(), user.ID, cred.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got.Roles {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"member"}) || !slices.Equal(cred.Roles, []string{"member"}) {
		t.Errorf("the credential's roles in Keystone %v (returned %v), want [member]: the admin's admin role must not reach the cluster", names, cred.Roles)
	}
	want := time.Now().Add(48 * time.Hour)
	if got.ExpiresAt.Before(want.Add(-time.Minute)) || got.ExpiresAt.After(want.Add(time.Minute)) || !cred.ExpiresAt.Equal(got.ExpiresAt) {
		t.Errorf("expires_at %v (returned %v), want about %v", got.ExpiresAt, cred.ExpiresAt, want)
	}
	if _, _, err := loginWith(ctx, parseClouds(t, cred.CloudsYAML)); err != nil {
		t.Errorf("login with the limited credential: %v", err)
	}
	if err := limited.DeleteCredential(ctx, cluster, cred.ID); err != nil {
		t.Fatal(err)
	}

	reader, readerCaller := callerWith(t, k, "reader")
	_, err = limited.CreateCredential(ctx, readerCaller, clusterFor(readerCaller, reader))
	var ce *CredentialError
	if !errors.As(err, &ce) || !ce.FailedPrecondition() || !strings.Contains(err.Error(), "member, load-balancer_member") {
		t.Errorf("a reader's CreateCredential: %v; want FailedPrecondition naming the allowed roles", err)
	}
	if left := credentialsOfUser(t, k, reader.ID); len(left) != 0 {
		t.Errorf("the refused create left credentials %v", left)
	}

	all := limitedAdapter(t, k, nil, 0)
	cred, err = all.CreateCredential(ctx, caller, cluster)
	if err != nil {
		t.Fatalf("CreateCredential with every role: %v", err)
	}
	got, err = applicationcredentials.Get(ctx, k.Admin(), user.ID, cred.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got.Roles, func(r applicationcredentials.Role) bool { return r.Name == "admin" }) || !got.ExpiresAt.IsZero() {
		t.Errorf("with no role list and lifetime 0: roles %v expires %v; want the token's (admin among them), never", got.Roles, got.ExpiresAt)
	}
	if err := all.DeleteCredential(ctx, cluster, cred.ID); err != nil {
		t.Fatal(err)
	}
}

func clusterFor(caller Caller, user keystone.User) helmvalues.Cluster {
	return helmvalues.Cluster{UUID: "0c9d2e7a-5b1f-4e3d-8a61-" + caller.RequestID[len(caller.RequestID)-8:] + "0000", Name: "roles", ProjectID: caller.ProjectID, UserID: user.ID}
}

// credentialsOfUser are the names of a user's application credentials.
func credentialsOfUser(t *testing.T, k *keystone.Keystone, userID string) []string {
	t.Helper()
	page, err := applicationcredentials.List(k.Admin(), userID, nil).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := applicationcredentials.ExtractApplicationCredentials(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ac := range all {
		out = append(out, ac.Name)
	}
	return out
}
