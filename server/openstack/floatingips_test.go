package openstack

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

func TestFindFloatingIP(t *testing.T) {
	const adminToken = "gAAAAAB-test-admin-token-of-another-project"
	c := newFakeCloud(t, Config{})
	c.fake.AcceptToken(openstackfake.Token{ID: adminToken, UserID: "admin", ProjectID: otherProjet, Roles: []string{"admin", "member"}})
	free := c.fake.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.10", ProjectID: testProject})
	c.fake.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.11", ProjectID: testProject, PortID: "p-1", PortOwner: "compute:nova"})
	c.fake.AddFloatingIP(openstackfake.FloatingIP{Address: "203.0.113.12", ProjectID: otherProjet})
	// A cloud admin of another project sees every project's floating IPs.
	admin := Caller{AuthToken: adminToken, AuthURL: c.fake.IdentityURL(), ProjectID: otherProjet, RegionName: "RegionOne"}
	tests := []struct {
		name      string
		caller    Caller
		address   string
		want      FloatingIP
		wantFound bool
	}{
		{name: "free, of the project", caller: c.caller, address: "203.0.113.10",
			want: FloatingIP{ID: free.ID, Address: "203.0.113.10", ProjectID: testProject}, wantFound: true},
		{name: "attached, with its port's owner", caller: c.caller, address: "203.0.113.11",
			want: FloatingIP{Address: "203.0.113.11", ProjectID: testProject, PortID: "p-1", PortOwner: "compute:nova"}, wantFound: true},
		{name: "another project's is not found", caller: c.caller, address: "203.0.113.12"},
		{name: "no such address", caller: c.caller, address: "198.51.100.1"},
		{name: "an admin's token finds only its own project's", caller: admin, address: "203.0.113.10"},
		{name: "an admin's token finds its own project's", caller: admin, address: "203.0.113.12",
			want: FloatingIP{Address: "203.0.113.12", ProjectID: otherProjet}, wantFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := c.adapter.FindFloatingIP(context.Background(), tt.caller, tt.address)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.ID == "" {
				got.ID = ""
			}
			if found != tt.wantFound || got != tt.want {
				t.Errorf("FindFloatingIP = %+v, %v; want %+v, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

func TestFindFloatingIPNeutronDown(t *testing.T) {
	c := newFakeCloud(t, Config{})
	c.fake.Fail(openstackfake.NetworkService, openstackfake.Failure{Status: http.StatusServiceUnavailable})
	_, _, err := c.adapter.FindFloatingIP(context.Background(), c.caller, "203.0.113.10")
	if class(err) != "Unavailable" || !strings.Contains(err.Error(), "Neutron") || !strings.Contains(err.Error(), "203.0.113.10") {
		t.Fatalf("error %v (%s), want Unavailable naming Neutron and the address", err, class(err))
	}
}
