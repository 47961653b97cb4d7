package openstackfake

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/magnum-capi/magnum-capi/test/keystone"
)

var sharedKeystone keystone.Shared

func TestMain(m *testing.M) { os.Exit(sharedKeystone.Run(m)) }

// With a real Keystone the fake is found through the catalog and accepts
// exactly the tokens Keystone accepts, scoped as Keystone scoped them.
func TestValidatesTokensAgainstKeystone(t *testing.T) {
	ctx := context.Background()
	k := sharedKeystone.Get(t)
	s := NewT(t)
	if err := k.RegisterEndpoints(ctx, s.Endpoints()); err != nil {
		t.Fatal(err)
	}
	s.UseKeystone(k.AuthURL)
	projA, err := k.CreateProject(ctx, "fake-a")
	if err != nil {
		t.Fatal(err)
	}
	projB, err := k.CreateProject(ctx, "fake-b")
	if err != nil {
		t.Fatal(err)
	}
	user, err := k.CreateUser(ctx, "fake-user", projA, "member")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Token(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	mine := s.AddImage(Image{Name: "mine", Owner: projA.ID, Visibility: "private"})
	theirs := s.AddImage(Image{Name: "theirs", Owner: projB.ID, Visibility: "private"})

	pc, err := openstack.NewClient(k.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	pc.HTTPClient = http.Client{Timeout: 30 * time.Second}
	if err := openstack.Authenticate(ctx, pc, gophercloud.AuthOptions{IdentityEndpoint: k.AuthURL, TokenID: tok.ID}); err != nil {
		t.Fatal(err)
	}
	glance, err := openstack.NewImageV2(pc, gophercloud.EndpointOpts{Region: keystone.Region})
	if err != nil {
		t.Fatal(err)
	}
	if err := images.Get(ctx, glance, mine.ID).Err; err != nil {
		t.Errorf("own private image: %v", err)
	}
	if err := images.Get(ctx, glance, theirs.ID).Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("other project's private image: %v, want 404", err)
	}

	req, _ := http.NewRequest(http.MethodGet, s.URL+"/image/v2/images", nil)
	req.Header.Set("X-Auth-Token", "gAAAAABnot-a-real-fernet-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token Keystone does not know: %d, want 401", resp.StatusCode)
	}
}
