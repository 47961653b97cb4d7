package openstack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/magnum-capi/magnum-capi/test/keystone"
)

// A request from another project acts as the cluster's own application
// credential (Caller.ClusterCloudsYAML): through a real Keystone and the
// Nova double that asks Keystone whose each token is, the server groups it
// makes and deletes are the cluster's project's, never the requester's, and
// a credential that is not of the project the request names is refused,
// naming the credential rather than the user's token.
func TestClusterCredentialActsInTheClusterProject(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	fake := rc.services(t)
	cred, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
	if err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	t.Cleanup(func() { _ = rc.admin.DeleteCredential(context.Background(), rc.clusters, cred.ID) })

	// A cloud admin of another project.
	other, err := rc.k.CreateProject(ctx, "admins-"+suffix())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := rc.k.CreateUser(ctx, "cloud-admin-"+suffix(), other, "admin")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rc.k.Token(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	asCluster := Caller{ClusterCloudsYAML: cred.CloudsYAML, AuthURL: rc.k.AuthURL, ProjectID: rc.caller.ProjectID, RegionName: keystone.Region}
	asAdmin := Caller{AuthToken: tok.ID, AuthURL: rc.k.AuthURL, UserID: admin.ID, ProjectID: other.ID, RegionName: keystone.Region}

	names := []string{"k8s-abc-control-plane", "k8s-abc-default-worker"}
	groups, err := rc.admin.EnsureServerGroups(ctx, asCluster, "anti-affinity", names)
	if err != nil || len(groups) != 2 {
		t.Fatalf("EnsureServerGroups as the cluster's credential: %v, %v", groups, err)
	}
	if got := fake.ServerGroups(rc.caller.ProjectID); len(got) != 2 {
		t.Errorf("the cluster's project has %d server groups, want 2", len(got))
	}
	if got := fake.ServerGroups(other.ID); len(got) != 0 {
		t.Errorf("the admin's project got server groups: %+v", got)
	}
	// The admin's own token would have listed its own project: nothing there.
	if n, err := rc.admin.DeleteServerGroups(ctx, asAdmin, names); err != nil || n != 0 {
		t.Errorf("DeleteServerGroups with the admin's token found %d (%v): its project has none of the cluster's", n, err)
	}
	if n, err := rc.admin.DeleteServerGroups(ctx, asCluster, names); err != nil || n != 2 {
		t.Errorf("DeleteServerGroups as the cluster's credential deleted %d (%v), want 2", n, err)
	}
	if got := fake.ServerGroups(rc.caller.ProjectID); len(got) != 0 {
		t.Errorf("server groups left in the cluster's project: %+v", got)
	}

	refusals := []struct {
		name   string
		caller Caller
		want   string
	}{
		{"the credential is of another project than the request names", Caller{ClusterCloudsYAML: cred.CloudsYAML, AuthURL: rc.k.AuthURL, ProjectID: other.ID},
			"the cluster's application credential was refused: it is scoped to project"},
		{"a wrong secret", Caller{ClusterCloudsYAML: []byte(strings.Replace(string(cred.CloudsYAML), "application_credential_secret: ", "application_credential_secret: x", 1)), AuthURL: rc.k.AuthURL, ProjectID: rc.caller.ProjectID},
			"the cluster's application credential was refused"},
		{"a clouds.yaml without a credential", Caller{ClusterCloudsYAML: []byte("clouds: {}\n"), AuthURL: rc.k.AuthURL, ProjectID: rc.caller.ProjectID},
			"no cloud named openstack"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rc.admin.EnsureServerGroups(ctx, tt.caller, "anti-affinity", names)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "user token") {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Keystone writes a token's expiry with a zone, except when an application
// credential's own expiry limits the token.
func TestTokenExpiry(t *testing.T) {
	tests := []struct {
		body string
		want time.Time
		ok   bool
	}{
		{`{"token":{"expires_at":"2026-12-07T15:20:39.000000Z"}}`, time.Date(2026, 12, 7, 15, 20, 39, 0, time.UTC), true},
		{`{"token":{"expires_at":"2026-12-07T15:20:39"}}`, time.Date(2026, 12, 7, 15, 20, 39, 0, time.UTC), true},
		{`{"token":{"expires_at":"2026-12-07T15:20:39.123456"}}`, time.Date(2026, 12, 7, 15, 20, 39, 123456000, time.UTC), true},
		{`{"token":{"expires_at":"tomorrow"}}`, time.Time{}, false},
	}
	for _, tt := range tests {
		var res tokens.GetResult
		if err := json.Unmarshal([]byte(tt.body), &res.Body); err != nil {
			t.Fatal(err)
		}
		got, err := tokenExpiry(res)
		if (err == nil) != tt.ok || !got.Equal(tt.want) {
			t.Errorf("tokenExpiry(%s) = %v, %v; want %v (ok %v)", tt.body, got, err, tt.want, tt.ok)
		}
	}
}

// ClusterCredentials finds the credentials named for the cluster of every
// user of its project, with their owners, and nothing else; a service
// identity without Keystone's admin role may not look.
func TestClusterCredentialsOfEveryUser(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	project := keystone.Project{ID: rc.caller.ProjectID}
	colleague, err := rc.k.CreateUser(ctx, "colleague-"+suffix(), project, "member")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rc.k.Token(ctx, colleague)
	if err != nil {
		t.Fatal(err)
	}
	asColleague := Caller{AuthToken: tok.ID, AuthURL: rc.k.AuthURL, UserID: colleague.ID, ProjectID: project.ID, RegionName: keystone.Region}
	theirs, err := rc.admin.CreateCredential(ctx, asColleague, rc.clusters)
	if err != nil {
		t.Fatal(err)
	}
	other := rc.clusters
	other.UUID = "00000000-0000-4000-8000-" + suffix() + "0000"
	if _, err := rc.admin.CreateCredential(ctx, asColleague, other); err != nil {
		t.Fatal(err)
	}

	got, err := rc.admin.ClusterCredentials(ctx, rc.clusters)
	if err != nil {
		t.Fatalf("ClusterCredentials: %v", err)
	}
	want := map[string]string{mine.ID: rc.user.ID, theirs.ID: colleague.ID}
	if len(got) != len(want) {
		t.Fatalf("ClusterCredentials = %+v, want %v (id → owner)", got, want)
	}
	for _, ref := range got {
		if want[ref.ID] != ref.UserID {
			t.Errorf("credential %s (%s) owned by %q, want %q", ref.ID, ref.Name, ref.UserID, want[ref.ID])
		}
	}
	if _, err := rc.weak.ClusterCredentials(ctx, rc.clusters); err == nil || !strings.Contains(err.Error(), "service identity") {
		t.Errorf("a member-only service identity listed the project's users: %v", err)
	}
}
