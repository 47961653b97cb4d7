package openstack

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// TestEnsureServerGroups runs find-or-create against the fake's recorded
// Nova answers: what exists is reused (duplicates without members are
// deleted), what is missing is made with the policy, and a retry makes
// nothing more.
func TestEnsureServerGroups(t *testing.T) {
	tests := []struct {
		name     string
		existing []openstackfake.ServerGroup
		policy   string
		want     map[string]string // name → policy found after
		wantLeft int               // groups in the project after
	}{
		{"nothing yet: both made with the policy", nil, "soft-anti-affinity",
			map[string]string{"s-control-plane": "soft-anti-affinity", "s-nodegroup-default-worker": "soft-anti-affinity"}, 2},
		{"an existing group keeps its own policy",
			[]openstackfake.ServerGroup{{Name: "s-control-plane", Policy: "anti-affinity", ProjectID: testProject}}, "affinity",
			map[string]string{"s-control-plane": "anti-affinity", "s-nodegroup-default-worker": "affinity"}, 2},
		{"an empty duplicate is deleted, the one with members kept",
			[]openstackfake.ServerGroup{
				{ID: "empty", Name: "s-control-plane", Policy: "anti-affinity", ProjectID: testProject},
				{ID: "used", Name: "s-control-plane", Policy: "anti-affinity", ProjectID: testProject, Members: []string{"srv"}},
			}, "anti-affinity",
			map[string]string{"s-control-plane": "anti-affinity", "s-nodegroup-default-worker": "anti-affinity"}, 2},
		{"another project's group of the same name is not seen",
			[]openstackfake.ServerGroup{{Name: "s-control-plane", Policy: "affinity", ProjectID: otherProjet}}, "soft-affinity",
			map[string]string{"s-control-plane": "soft-affinity", "s-nodegroup-default-worker": "soft-affinity"}, 2},
	}
	names := []string{"s-control-plane", "s-nodegroup-default-worker"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFakeCloud(t, Config{})
			for _, g := range tt.existing {
				c.fake.AddServerGroup(g)
			}
			ctx := context.Background()
			got, err := c.adapter.EnsureServerGroups(ctx, c.caller, tt.policy, names)
			if err != nil {
				t.Fatal(err)
			}
			for name, policy := range tt.want {
				if got[name].Policy != policy || got[name].ID == "" || got[name].Name != name {
					t.Errorf("%s = %+v, want policy %s", name, got[name], policy)
				}
			}
			if got["s-control-plane"].ID == "empty" {
				t.Errorf("kept the empty duplicate, not the group with members")
			}
			if n := len(c.fake.ServerGroups(testProject)); n != tt.wantLeft {
				t.Errorf("%d groups in the project, want %d: %+v", n, tt.wantLeft, c.fake.ServerGroups(testProject))
			}
			again, err := c.adapter.EnsureServerGroups(ctx, c.caller, tt.policy, names)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				if again[name].ID != got[name].ID {
					t.Errorf("retry: %s is %s, first call %s", name, again[name].ID, got[name].ID)
				}
			}
			if n := len(c.fake.ServerGroups(testProject)); n != tt.wantLeft {
				t.Errorf("retry made groups: %d, want %d", n, tt.wantLeft)
			}
			if u := c.fake.Unrouted(); len(u) > 0 {
				t.Errorf("requests the fake does not know: %+v", u)
			}
		})
	}
}

func TestDeleteServerGroups(t *testing.T) {
	c := newFakeCloud(t, Config{})
	for _, g := range []openstackfake.ServerGroup{
		{Name: "s-control-plane", Policy: "anti-affinity", ProjectID: testProject, Members: []string{"srv"}},
		{Name: "s-nodegroup-a", Policy: "anti-affinity", ProjectID: testProject},
		{Name: "s-nodegroup-a", Policy: "anti-affinity", ProjectID: testProject},
		{Name: "s-nodegroup-b", Policy: "anti-affinity", ProjectID: testProject},   // not asked for
		{Name: "s-control-plane", Policy: "anti-affinity", ProjectID: otherProjet}, // not the caller's
	} {
		c.fake.AddServerGroup(g)
	}
	ctx := context.Background()
	n, err := c.adapter.DeleteServerGroups(ctx, c.caller, []string{"s-control-plane", "s-nodegroup-a", "s-nodegroup-gone"})
	if err != nil || n != 3 {
		t.Fatalf("DeleteServerGroups = %d, %v; want 3 deleted", n, err)
	}
	var left []string
	for _, g := range c.fake.ServerGroups(testProject) {
		left = append(left, g.Name)
	}
	sort.Strings(left)
	if strings.Join(left, ",") != "s-nodegroup-b" || len(c.fake.ServerGroups(otherProjet)) != 1 {
		t.Errorf("left %v in the project and %d in the other, want s-nodegroup-b and 1", left, len(c.fake.ServerGroups(otherProjet)))
	}
	if n, err := c.adapter.DeleteServerGroups(ctx, c.caller, []string{"s-control-plane", "s-nodegroup-a"}); err != nil || n != 0 {
		t.Errorf("retry = %d, %v; want nothing to do", n, err)
	}
}

// TestServerGroupErrors: the quota is named to the tenant without ids or
// URLs; Nova down is Unavailable naming compute.
func TestServerGroupErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("quota", func(t *testing.T) {
		c := newFakeCloud(t, Config{})
		c.fake.SetServerGroupQuota(1)
		_, err := c.adapter.EnsureServerGroups(ctx, c.caller, "soft-anti-affinity", []string{"s-control-plane", "s-nodegroup-a"})
		wantFailedPrecondition(t, err, "quota server_groups exceeded", "")
		qe, ok := err.(*QuotaError)
		if !ok {
			t.Fatalf("error %T, want *QuotaError", err)
		}
		if msg := qe.UserMessage(); strings.Contains(msg, c.fake.URL) || strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "raise the project's server_groups quota") {
			t.Errorf("tenant message %q: want the quota named and no endpoint", msg)
		}
	})
	t.Run("nova down", func(t *testing.T) {
		c := newFakeCloud(t, Config{})
		c.fake.Fail(openstackfake.ComputeService, openstackfake.Failure{Status: http.StatusServiceUnavailable})
		_, err := c.adapter.EnsureServerGroups(ctx, c.caller, "anti-affinity", []string{"s-control-plane"})
		if class(err) != "Unavailable" || !strings.Contains(err.Error(), "compute") {
			t.Fatalf("error %v (%s), want Unavailable naming compute", err, class(err))
		}
		_, err = c.adapter.DeleteServerGroups(ctx, c.caller, []string{"s-control-plane"})
		if class(err) != "Unavailable" {
			t.Fatalf("delete: error %v (%s), want Unavailable", err, class(err))
		}
	})
}

func TestIsQuotaRefusal(t *testing.T) {
	for msg, want := range map[string]bool{
		"Quota exceeded, too many server groups.":                              true,
		"Resource server_groups is over limit of 10 due to exceeding it by 1.": true,
		"Policy doesn't allow os_compute_api:os-server-groups:create":          false,
	} {
		if got := isQuotaRefusal(msg); got != want {
			t.Errorf("isQuotaRefusal(%q) = %v, want %v", msg, got, want)
		}
	}
}
