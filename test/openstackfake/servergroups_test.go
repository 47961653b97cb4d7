package openstackfake

import (
	"context"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
)

// Server groups as Nova answers them by microversion: the soft policies
// only from 2.15, `policies` before 2.64 and `policy` from it, project_id
// from 2.13; each project sees its own; the server_groups quota is Nova's
// 403.
func TestServerGroups(t *testing.T) {
	ctx := context.Background()
	s := NewT(t)
	nova := func(tok Token, microversion string) *gophercloud.ServiceClient {
		c, err := openstack.NewComputeV2(client(t, s, tok), gophercloud.EndpointOpts{Region: "RegionOne"})
		if err != nil {
			t.Fatal(err)
		}
		c.Microversion = microversion
		return c
	}
	a := Token{ID: "token-a", UserID: "alice", ProjectID: projectA}
	tests := []struct {
		name         string
		microversion string
		opts         servergroups.CreateOpts
		status       int
		wantPolicy   string
	}{
		{"2.1: anti-affinity", "", servergroups.CreateOpts{Name: "g1", Policies: []string{"anti-affinity"}}, http.StatusOK, "anti-affinity"},
		{"2.1: no soft policies", "", servergroups.CreateOpts{Name: "g2", Policies: []string{"soft-anti-affinity"}}, http.StatusBadRequest, ""},
		{"2.15: soft-anti-affinity", "2.15", servergroups.CreateOpts{Name: "g3", Policies: []string{"soft-anti-affinity"}}, http.StatusOK, "soft-anti-affinity"},
		{"2.15: two policies", "2.15", servergroups.CreateOpts{Name: "g4", Policies: []string{"affinity", "anti-affinity"}}, http.StatusBadRequest, ""},
		{"2.64: policy", "2.64", servergroups.CreateOpts{Name: "g5", Policy: "soft-affinity"}, http.StatusOK, "soft-affinity"},
		{"name with trailing blank", "2.15", servergroups.CreateOpts{Name: "g6 ", Policies: []string{"affinity"}}, http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := servergroups.Create(ctx, nova(a, tt.microversion), tt.opts).Extract()
			if tt.status != http.StatusOK {
				if !gophercloud.ResponseCodeIs(err, tt.status) {
					t.Fatalf("error %v, want %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if g.Policy != nil {
				got = *g.Policy
			} else if len(g.Policies) == 1 {
				got = g.Policies[0]
			}
			if got != tt.wantPolicy || g.Name != tt.opts.Name || (tt.microversion != "" && g.ProjectID != projectA) {
				t.Errorf("created %+v, want policy %s in project %s", g, tt.wantPolicy, projectA)
			}
		})
	}
	s.AddServerGroup(ServerGroup{Name: "theirs", Policy: "affinity", ProjectID: "other"})
	pages, err := servergroups.List(nova(a, "2.15"), nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := servergroups.ExtractServerGroups(pages)
	if len(mine) != 3 {
		t.Errorf("project A lists %d groups, want its 3: %+v", len(mine), mine)
	}
	if err := servergroups.Delete(ctx, nova(a, "2.15"), mine[0].ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := servergroups.Delete(ctx, nova(a, "2.15"), mine[0].ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("second delete: %v, want 404", err)
	}
	s.SetServerGroupQuota(2)
	err = servergroups.Create(ctx, nova(a, "2.15"), servergroups.CreateOpts{Name: "over", Policies: []string{"affinity"}}).Err
	if !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Errorf("over the quota: %v, want 403", err)
	}
	if u := s.Unrouted(); len(u) > 0 {
		t.Errorf("unrouted: %+v", u)
	}
}
