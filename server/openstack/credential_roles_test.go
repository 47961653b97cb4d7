package openstack

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCredentialRoles: one case per rule of credentialRoles.
func TestCredentialRoles(t *testing.T) {
	tests := []struct {
		name         string
		wanted, held []string
		want         []string
		err          string
	}{
		{name: "no list: every role of the token (Keystone's default)", held: []string{"admin", "member"}, want: nil},
		{name: "only the allowed roles the token carries", wanted: []string{"member", "load-balancer_member"}, held: []string{"admin", "member", "reader"}, want: []string{"member"}},
		{name: "all allowed roles held", wanted: []string{"member", "load-balancer_member"}, held: []string{"load-balancer_member", "member"}, want: []string{"load-balancer_member", "member"}},
		{name: "case-insensitive, in the token's spelling", wanted: []string{"Member"}, held: []string{"member"}, want: []string{"member"}},
		{name: "a role held twice is asked for once", wanted: []string{"member"}, held: []string{"member", "MEMBER"}, want: []string{"member"}},
		{name: "none of them held", wanted: []string{"member", "load-balancer_member"}, held: []string{"reader"},
			err: "none of the roles a cluster's credential may get (member, load-balancer_member; it has reader)"},
		{name: "a token without roles", wanted: []string{"member"}, err: "it has none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := credentialRoles(tt.wanted, tt.held)
			if tt.err != "" {
				var ce *CredentialError
				if !errors.As(err, &ce) || !ce.FailedPrecondition() || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("credentialRoles = %v, %v; want a FailedPrecondition CredentialError containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") || (got == nil) != (tt.want == nil) {
				t.Errorf("credentialRoles = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestCredentialExpiry: a lifetime of 0 never expires; otherwise now plus
// the lifetime, in UTC to the second (Keystone keeps no more).
func TestCredentialExpiry(t *testing.T) {
	now := time.Date(2026, 12, 3, 16, 0, 0, 999, time.FixedZone("CET", 3600))
	if got := credentialExpiry(now, 0); got != nil {
		t.Errorf("lifetime 0: %v, want nil", got)
	}
	got := credentialExpiry(now, 48*time.Hour)
	if want := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC); got == nil || !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("lifetime 48h: %v, want %v", got, want)
	}
}
