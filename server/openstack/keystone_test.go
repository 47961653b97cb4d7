package openstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// One real Keystone for the package, started by the first test that needs
// it. Missing Debian packages fail those tests with the hack/deps.sh hint.
var sharedKeystone keystone.Shared

func TestMain(m *testing.M) { os.Exit(sharedKeystone.Run(m)) }

// realCloud is a Keystone with a user (member of its project), a service
// identity with the admin role and one with only the member role.
type realCloud struct {
	k        *keystone.Keystone
	user     keystone.User
	caller   Caller
	admin    *Adapter // service identity "magnum", admin on the service project
	weak     *Adapter // service identity with the member role only
	clusters helmvalues.Cluster
}

func suffix() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newRealCloud(t *testing.T) *realCloud {
	t.Helper()
	ctx := context.Background()
	k := sharedKeystone.Get(t)
	sfx := suffix()
	demo, err := k.CreateProject(ctx, "demo-"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	user, err := k.CreateUser(ctx, "demo-"+sfx, demo, "member")
	if err != nil {
		t.Fatal(err)
	}
	service, err := k.CreateProject(ctx, "service-"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	rc := &realCloud{k: k, user: user}
	for _, sv := range []struct {
		role string
		dst  **Adapter
	}{{"admin", &rc.admin}, {"member", &rc.weak}} {
		u, err := k.CreateUser(ctx, "magnum-"+sv.role+"-"+sfx, service, sv.role)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "clouds.yaml")
		if err := k.WriteCloudsYAML(path, "magnum", u); err != nil {
			t.Fatal(err)
		}
		a, err := New(Config{CloudsFile: path, Cloud: "magnum", Region: keystone.Region, Timeout: time.Minute, SkipFlavorCheck: true}, quietLog())
		if err != nil {
			t.Fatal(err)
		}
		*sv.dst = a
	}
	tok, err := k.Token(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	rc.caller = Caller{AuthToken: tok.ID, AuthURL: k.AuthURL, UserID: user.ID, ProjectID: demo.ID, RegionName: keystone.Region, RequestID: "req-" + sfx}
	rc.clusters = helmvalues.Cluster{UUID: "6f2c1a8e-0b7d-4c3e-9a51-" + sfx + "0000", Name: "k8s-" + sfx, ProjectID: demo.ID, UserID: user.ID}
	return rc
}

// services are the OpenStack doubles in rc's Keystone catalog, asking
// Keystone whose each token is.
func (rc *realCloud) services(t *testing.T) *openstackfake.Server {
	t.Helper()
	fake := openstackfake.NewT(t)
	rc.k.RegisterEndpointsFor(t, fake.Endpoints())
	fake.UseKeystone(rc.k.AuthURL)
	return fake
}

// cloudsEntry is the part of a cluster's clouds.yaml a client uses.
type cloudsEntry struct {
	Auth struct {
		AuthURL string `json:"auth_url"`
		ID      string `json:"application_credential_id"`
		Secret  string `json:"application_credential_secret"`
	} `json:"auth"`
	AuthType  string `json:"auth_type"`
	Region    string `json:"region_name"`
	Interface string `json:"interface"`
	Verify    bool   `json:"verify"`
}

func parseClouds(t *testing.T, raw []byte) cloudsEntry {
	t.Helper()
	var doc struct {
		Clouds map[string]cloudsEntry `json:"clouds"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c, ok := doc.Clouds["openstack"]
	if !ok {
		t.Fatalf("no cloud openstack in:\n%s", raw)
	}
	return c
}

// loginWith authenticates with a cluster's clouds.yaml, as CAPO does.
func loginWith(ctx context.Context, c cloudsEntry) (*tokens.Token, *tokens.Project, error) {
	pc, err := openstack.NewClient(c.Auth.AuthURL)
	if err != nil {
		return nil, nil, err
	}
	pc.HTTPClient = http.Client{Timeout: time.Minute}
	if err := openstack.Authenticate(ctx, pc, gophercloud.AuthOptions{
		IdentityEndpoint: c.Auth.AuthURL, ApplicationCredentialID: c.Auth.ID, ApplicationCredentialSecret: c.Auth.Secret,
	}); err != nil {
		return nil, nil, err
	}
	res := pc.GetAuthResult().(tokens.CreateResult)
	tok, err := res.ExtractToken()
	if err != nil {
		return nil, nil, err
	}
	project, err := res.ExtractProject()
	return tok, project, err
}

func TestApplicationCredentialLifecycle(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)

	cred, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
	if err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	if !regexp.MustCompile(`^magnum-` + rc.clusters.UUID + `-[0-9a-f]{8}$`).MatchString(cred.Name) {
		t.Errorf("name %q, want magnum-<uuid>-<8 hex>", cred.Name)
	}
	if len(cred.CACert) != 0 {
		t.Errorf("cacert set without a CA file")
	}
	c := parseClouds(t, cred.CloudsYAML)
	if c.Auth.ID != cred.ID || c.Auth.Secret == "" || c.AuthType != "v3applicationcredential" ||
		c.Auth.AuthURL != rc.k.AuthURL || c.Region != keystone.Region || c.Interface != "public" || !c.Verify {
		t.Errorf("clouds.yaml entry %+v", c)
	}
	if id, err := rc.admin.CredentialIDFromClouds(cred.CloudsYAML); err != nil || id != cred.ID {
		t.Errorf("CredentialIDFromClouds = %q, %v; want %s", id, err, cred.ID)
	}

	// The credential logs in as the user, in the user's project.
	tok, project, err := loginWith(ctx, c)
	if err != nil {
		t.Fatalf("login with the cluster's clouds.yaml: %v", err)
	}
	if project == nil || project.ID != rc.caller.ProjectID || tok.ExpiresAt.Before(time.Now()) {
		t.Errorf("app-cred token project %+v, want %s", project, rc.caller.ProjectID)
	}
	got, err := applicationcredentials.Get(ctx, rc.k.Admin(), rc.user.ID, cred.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.Unrestricted || got.Description != "Magnum cluster ("+rc.clusters.Name+")" || got.ExpiresAt != (time.Time{}) {
		t.Errorf("credential %+v: want restricted, no expiry, description naming the cluster", got)
	}

	if err := rc.admin.DeleteCredential(ctx, rc.clusters, cred.ID); err != nil {
		t.Fatalf("DeleteCredential: %v", err)
	}
	// Keystone 22 answers 404 "Could not find Application Credential".
	if _, _, err := loginWith(ctx, c); !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("login after delete: %v, want 401 or 404", err)
	}
	if err := rc.admin.DeleteCredential(ctx, rc.clusters, cred.ID); err != nil {
		t.Fatalf("second DeleteCredential (404 is done): %v", err)
	}
}

// Deleting what is not ours, or without the rights, is an error that names
// the credential and leaves it working.
func TestDeleteCredentialRefusals(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	ownByHand := func(t *testing.T, name string) (string, cloudsEntry) {
		identity, err := userIdentity(ctx, rc)
		if err != nil {
			t.Fatal(err)
		}
		ac, err := applicationcredentials.Create(ctx, identity, rc.user.ID, applicationcredentials.CreateOpts{Name: name}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		var c cloudsEntry
		c.Auth.AuthURL, c.Auth.ID, c.Auth.Secret = rc.k.AuthURL, ac.ID, ac.Secret
		return ac.ID, c
	}
	tests := []struct {
		name    string
		make    func(t *testing.T) (string, cloudsEntry)
		adapter *Adapter
		cluster helmvalues.Cluster
		errHas  []string
	}{
		{name: "service identity without the admin role", adapter: rc.weak, cluster: rc.clusters,
			make: func(t *testing.T) (string, cloudsEntry) {
				cred, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
				if err != nil {
					t.Fatal(err)
				}
				return cred.ID, parseClouds(t, cred.CloudsYAML)
			},
			errHas: []string{"left in Keystone", "403", "admin role", "openstack application credential delete"}},
		{name: "credential of another cluster", adapter: rc.admin,
			cluster: helmvalues.Cluster{UUID: "00000000-1111-4222-8333-444444444444", UserID: rc.user.ID},
			make: func(t *testing.T) (string, cloudsEntry) {
				cred, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
				if err != nil {
					t.Fatal(err)
				}
				return cred.ID, parseClouds(t, cred.CloudsYAML)
			},
			errHas: []string{"refusing", "magnum-00000000-1111-4222-8333-444444444444"}},
		{name: "credential the user made for something else", adapter: rc.admin, cluster: rc.clusters,
			make:   func(t *testing.T) (string, cloudsEntry) { return ownByHand(t, "ci-runner") },
			errHas: []string{"refusing", "ci-runner"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, c := tt.make(t)
			err := tt.adapter.DeleteCredential(ctx, tt.cluster, id)
			if class(err) != "FailedPrecondition" {
				t.Fatalf("DeleteCredential: %v (%s), want FailedPrecondition", err, class(err))
			}
			for _, s := range append(tt.errHas, id) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if _, _, err := loginWith(ctx, c); err != nil {
				t.Errorf("the credential must still work: %v", err)
			}
		})
	}
}

// userIdentity is an identity client acting as the test user.
func userIdentity(ctx context.Context, rc *realCloud) (*gophercloud.ServiceClient, error) {
	pc, err := openstack.NewClient(rc.k.AuthURL)
	if err != nil {
		return nil, err
	}
	pc.HTTPClient = http.Client{Timeout: time.Minute}
	if err := openstack.Authenticate(ctx, pc, gophercloud.AuthOptions{IdentityEndpoint: rc.k.AuthURL, TokenID: rc.caller.AuthToken}); err != nil {
		return nil, err
	}
	return openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
}

// Keystone refuses to let a token that is itself a (restricted) application
// credential create another one: Magnum users who log in with one get a
// precondition error that says why.
func TestCreateCredentialWithAnApplicationCredentialToken(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	identity, err := userIdentity(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := applicationcredentials.Create(ctx, identity, rc.user.ID, applicationcredentials.CreateOpts{Name: "cli-" + suffix()}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var login cloudsEntry
	login.Auth.AuthURL, login.Auth.ID, login.Auth.Secret = rc.k.AuthURL, ac.ID, ac.Secret
	tok, _, err := loginWith(ctx, login)
	if err != nil {
		t.Fatal(err)
	}
	caller := rc.caller
	caller.AuthToken = tok.ID
	_, err = rc.admin.CreateCredential(ctx, caller, rc.clusters)
	if class(err) != "FailedPrecondition" || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "application credential") {
		t.Fatalf("CreateCredential with an app-cred token: %v (%s), want FailedPrecondition explaining the 403", err, class(err))
	}
	if strings.Contains(err.Error(), tok.ID) {
		t.Fatalf("error quotes the token")
	}
}

func TestServiceIdentityFailures(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	cluster := rc.clusters
	dir := t.TempDir()
	write := func(name, authURL, password string) string {
		p := filepath.Join(dir, name)
		doc := "clouds:\n  magnum:\n    auth:\n      auth_url: " + authURL + "\n      username: nobody-" + suffix() +
			"\n      password: " + password + "\n      user_domain_id: default\n      project_name: service\n      project_domain_id: default\n"
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		cfg    Config
		class  string
		errHas string
	}{
		{"wrong password", Config{CloudsFile: write("wrong.yaml", rc.k.AuthURL, "not-the-password"), Cloud: "magnum"}, "FailedPrecondition", "service identity"},
		{"keystone unreachable", Config{CloudsFile: write("down.yaml", closedURL(t)+"/v3", "x"), Cloud: "magnum"}, "Unavailable", "OpenStack identity service unavailable"},
		{"no service identity configured", Config{}, "FailedPrecondition", "openstack.cloudsFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(tt.cfg, quietLog())
			if err != nil {
				t.Fatal(err)
			}
			err = a.DeleteCredential(ctx, cluster, "0123456789abcdef0123456789abcdef")
			if got := class(err); got != tt.class {
				t.Fatalf("class %s, want %s: %v", got, tt.class, err)
			}
			for _, s := range []string{tt.errHas, "0123456789abcdef0123456789abcdef", "left in Keystone"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "not-the-password") {
				t.Errorf("error quotes the password")
			}
		})
	}
}

// Facts through a real Keystone: the user's token is validated by Keystone,
// the fake services are found in Keystone's catalog and accept the token
// because Keystone does, and the user sees only what its project may.
func TestFactsThroughKeystone(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	fake := rc.services(t)
	mine := fake.AddImage(openstackfake.Image{Name: "kube-1.30", Owner: rc.caller.ProjectID, Visibility: "private",
		Properties: map[string]string{"kube_version": "v1.30.2", "os_distro": "flatcar"}})
	theirs := fake.AddImage(openstackfake.Image{Name: "kube-1.31", Owner: "another-project", Visibility: "private",
		Properties: map[string]string{"kube_version": "v1.31.0"}})
	public := fake.AddNetwork(openstackfake.Network{Name: "public", ProjectID: "admin-project", External: true})
	fake.AddVolumeType(openstackfake.VolumeType{Name: "__DEFAULT__"})

	spec := Objects{Cluster: rc.clusters, Template: helmvalues.ClusterTemplate{ImageID: "kube-1.30", ExternalNetworkID: "public"}}
	facts, err := rc.admin.Facts(ctx, rc.caller, spec)
	if err != nil {
		t.Fatalf("Facts: %v", err)
	}
	want := helmvalues.Image{ID: mine.ID, KubeVersion: "v1.30.2", OSDistro: "flatcar"}
	if facts.Image != want || facts.ExternalNetworkID != public.ID || len(facts.VolumeTypes) != 1 {
		t.Fatalf("Facts = %+v", facts)
	}
	spec.Template.ImageID = theirs.ID
	if _, err := rc.admin.Facts(ctx, rc.caller, spec); class(err) != "InvalidArgument" || !strings.Contains(err.Error(), "cluster_template.image_id") {
		t.Fatalf("another project's private image: %v", err)
	}
}

// After rotate_credential moves a cluster to another user, the old
// credential's owner is no longer cluster.UserID. Keystone 22 only uses the
// path's user id for the policy check (the admin passes it) and finds the
// credential by id, so the delete still works.
func TestDeleteCredentialAfterOwnerChange(t *testing.T) {
	ctx := context.Background()
	rc := newRealCloud(t)
	cred, err := rc.admin.CreateCredential(ctx, rc.caller, rc.clusters)
	if err != nil {
		t.Fatal(err)
	}
	moved := rc.clusters
	moved.UserID = "0000000000000000000000000000beef" // the new owner, not the credential's
	if err := rc.admin.DeleteCredential(ctx, moved, cred.ID); err != nil {
		t.Fatalf("DeleteCredential with another user in the path: %v", err)
	}
	if _, err := applicationcredentials.Get(ctx, rc.k.Admin(), rc.user.ID, cred.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("credential still there: %v", err)
	}
}
