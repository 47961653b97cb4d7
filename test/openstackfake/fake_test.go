package openstackfake

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

const (
	projectA = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"
	projectB = "f9e8d7c6b5a4493827160f5e4d3c2b1a"
)

// client logs in to the fake's identity with a registered token, the way
// the sidecar passes a user's token through, and returns a provider whose
// catalog points at the fake.
func client(t *testing.T, s *Server, tok Token) *gophercloud.ProviderClient {
	t.Helper()
	s.AcceptToken(tok)
	pc, err := openstack.NewClient(s.IdentityURL())
	if err != nil {
		t.Fatal(err)
	}
	pc.HTTPClient = http.Client{Timeout: 2 * time.Second}
	if err := openstack.Authenticate(context.Background(), pc, gophercloud.AuthOptions{IdentityEndpoint: s.IdentityURL(), TokenID: tok.ID}); err != nil {
		t.Fatal(err)
	}
	return pc
}

func TestGophercloudReadsEveryService(t *testing.T) {
	ctx := context.Background()
	s := NewT(t)
	img := s.AddImage(Image{Name: "ubuntu-kube", Owner: projectB, Properties: map[string]string{"kube_version": "v1.30.2", "os_distro": "ubuntu"}})
	private := s.AddImage(Image{Name: "secret", Owner: projectB, Visibility: "private"})
	pub := s.AddNetwork(Network{Name: "public", ProjectID: projectB, External: true})
	own := s.AddNetwork(Network{Name: "private", ProjectID: projectA})
	s.AddNetwork(Network{Name: "private", ProjectID: projectB}) // invisible to A
	sn := s.AddSubnet(Subnet{Name: "private-subnet", NetworkID: own.ID, ProjectID: projectA, CIDR: "192.168.10.0/24"})
	s.AddVolumeType(VolumeType{Name: "__DEFAULT__", Description: "Default Volume Type"})
	s.AddVolumeType(VolumeType{Name: "secret", Private: true})
	fl := s.AddFlavor(Flavor{ID: "3", Name: "m1.medium", RAM: 4096, VCPUs: 2, Disk: 40})
	pc := client(t, s, Token{ID: "token-a", UserID: "user-a", ProjectID: projectA})
	eo := gophercloud.EndpointOpts{Region: "RegionOne"}

	glance, err := openstack.NewImageV2(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	got, err := images.Get(ctx, glance, img.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != img.Name || got.Properties["kube_version"] != "v1.30.2" || got.Status != images.ImageStatusActive {
		t.Errorf("image = %+v", got)
	}
	if _, err := got.Properties["hw_disk_bus"]; err {
		t.Errorf("recorded property hw_disk_bus leaked into a registered image")
	}
	if err := images.Get(ctx, glance, private.ID).Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("private image of another project: %v, want 404", err)
	}
	page, err := images.List(glance, images.ListOpts{Name: "ubuntu-kube"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := images.ExtractImages(page); len(all) != 1 || all[0].ID != img.ID {
		t.Errorf("images by name = %+v", all)
	}

	neutron, err := openstack.NewNetworkV2(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	type extNetwork struct {
		networks.Network
		external.NetworkExternalExt
	}
	var nets []extNetwork
	iTrue := true
	page, err = networks.List(neutron, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{Name: "public"}, External: &iTrue}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := networks.ExtractNetworksInto(page, &nets); err != nil {
		t.Fatal(err)
	}
	if len(nets) != 1 || nets[0].ID != pub.ID || !nets[0].External {
		t.Errorf("external networks = %+v", nets)
	}
	page, err = networks.List(neutron, networks.ListOpts{Name: "private"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := networks.ExtractNetworks(page); len(all) != 1 || all[0].ID != own.ID || len(all[0].Subnets) != 1 {
		t.Errorf("networks named private visible to A = %+v", all)
	}
	gotSubnet, err := subnets.Get(ctx, neutron, sn.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if gotSubnet.GatewayIP != "192.168.10.1" || gotSubnet.NetworkID != own.ID {
		t.Errorf("subnet = %+v", gotSubnet)
	}

	cinder, err := openstack.NewBlockStorageV3(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	page, err = volumetypes.List(cinder, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vts, _ := volumetypes.ExtractVolumeTypes(page); len(vts) != 1 || vts[0].Name != "__DEFAULT__" || !vts[0].IsPublic {
		t.Errorf("volume types visible to a member = %+v", vts)
	}

	nova, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		t.Fatal(err)
	}
	gotFlavor, err := flavors.Get(ctx, nova, fl.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if gotFlavor.RAM != 4096 || gotFlavor.VCPUs != 2 || gotFlavor.Swap != 0 {
		t.Errorf("flavor = %+v", gotFlavor)
	}
	if err := flavors.Get(ctx, nova, "nope").Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("missing flavor: %v, want 404", err)
	}
}

func TestTokensAreChecked(t *testing.T) {
	s := NewT(t)
	s.AcceptToken(Token{ID: "good", ProjectID: projectA})
	s.AcceptToken(Token{ID: "expired", ProjectID: projectA, ExpiresAt: time.Now().Add(-time.Minute)})
	tests := []struct {
		name, token, path string
		want              int
	}{
		{"no token", "", "/image/v2/images", http.StatusUnauthorized},
		{"unknown token", "bogus", "/image/v2/images", http.StatusUnauthorized},
		{"expired token", "expired", "/networking/v2.0/networks", http.StatusUnauthorized},
		{"good token", "good", "/compute/v2.1/flavors/detail", http.StatusOK},
		{"version document needs none", "", "/networking/", http.StatusOK},
		{"glance versions are 300", "", "/image/", http.StatusMultipleChoices},
		{"cinder project must be the token's", "good", "/volume/v3/" + projectB + "/types", http.StatusBadRequest},
		{"cinder own project", "good", "/volume/v3/" + projectA + "/types", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.URL+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("X-Auth-Token", tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("GET %s = %d, want %d", tt.path, resp.StatusCode, tt.want)
			}
		})
	}
}

func TestFailuresAndCounts(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		failure Failure
		check   func(error) bool
		after   int // requests that still fail after the first
	}{
		{"503 from the load balancer", Failure{Status: 503}, func(err error) bool { return gophercloud.ResponseCodeIs(err, 503) }, 1},
		{"500 once", Failure{Status: 500, Times: 1}, func(err error) bool { return gophercloud.ResponseCodeIs(err, 500) }, 0},
		// net/http retries an idempotent request once on a dropped reused
		// connection, so a one-off drop is invisible: drop until Heal.
		{"connection dropped", Failure{Drop: true}, func(err error) bool { return err != nil }, 1},
		{"timeout", Failure{Delay: 5 * time.Second, Times: 1}, func(err error) bool {
			return errors.Is(err, context.DeadlineExceeded) || err != nil && isTimeout(err)
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewT(t)
			fl := s.AddFlavor(Flavor{Name: "m1.small", RAM: 2048, VCPUs: 1})
			pc := client(t, s, Token{ID: "t", ProjectID: projectA})
			nova, err := openstack.NewComputeV2(pc, gophercloud.EndpointOpts{})
			if err != nil {
				t.Fatal(err)
			}
			s.Fail(ComputeService, tt.failure)
			before := s.Requests(ComputeService)
			err = flavors.Get(ctx, nova, fl.ID).Err
			if !tt.check(err) {
				t.Fatalf("first request: %v", err)
			}
			err = flavors.Get(ctx, nova, fl.ID).Err
			if (err != nil) != (tt.after > 0) {
				t.Fatalf("second request: %v (still failing: %v)", err, tt.after > 0)
			}
			s.Heal(ComputeService)
			if err := flavors.Get(ctx, nova, fl.ID).Err; err != nil {
				t.Fatalf("after Heal: %v", err)
			}
			if got := s.Requests(ComputeService) - before; got < 3 {
				t.Fatalf("counted %d compute requests, want at least 3", got)
			}
		})
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
