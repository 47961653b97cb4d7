package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"

	"github.com/magnum-capi/magnum-capi/server/clusters"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestCredentialRenewedBeforeExpiry, against the real Keystone: the
// cluster's application credential carries only the configured roles the
// user holds and expires as configured (on the Secret too); a resize
// inside the renewal window replaces it (a new one in the Secret that
// authenticates, the old one deleted from Keystone, nothing else left). A
// lifetime of an hour renewed from 59m59s ahead stands in for a year
// renewed 30 days ahead: a second after the create, it is due.
func TestCredentialRenewedBeforeExpiry(t *testing.T) {
	sc := startSidecar(t, harness.SidecarOptions{Name: "renewing", Configure: func(c *config.Config) {
		c.OpenStack.ApplicationCredentialRoles = []string{"member", "load-balancer_member"}
		c.OpenStack.ApplicationCredentialLifetime = time.Hour
		c.OpenStack.ApplicationCredentialRenewBefore = time.Hour - time.Second
	}})
	c := newCluster(t, "renew", "v1.33.2", 1)
	stackID := c.create(t, sc.Driver)
	t.Cleanup(func() { c.remove(t, sc.Driver) })
	ns := projectNamespace()

	secret := credentialSecret(t, ns, stackID)
	first := authenticates(t, secret)
	firstExpiry := expiryOf(t, secret.Annotations[clusters.CredentialExpiresAnnotation])
	if d := time.Until(firstExpiry); d < 50*time.Minute || d > time.Hour {
		t.Errorf("the Secret says the credential expires in %s, want about an hour", d)
	}
	ac := onlyCredential(t, c, first)
	if !ac.ExpiresAt.Equal(firstExpiry) || !slices.Equal(roleNames(ac), []string{"member"}) {
		t.Errorf("Keystone's credential expires %v with roles %v; want %v (the Secret's) and [member] (the demo user holds no load-balancer_member)", ac.ExpiresAt, roleNames(ac), firstExpiry)
	}

	time.Sleep(time.Second)
	ctx, cancel := callCtx()
	_, err := sc.Driver.ResizeCluster(ctx, c.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster: %v", err)
	}
	secret = credentialSecret(t, ns, stackID)
	second := authenticates(t, secret)
	if second == first {
		t.Fatal("a resize inside the renewal window kept the credential")
	}
	onlyCredential(t, c, second)
	if e := expiryOf(t, secret.Annotations[clusters.CredentialExpiresAnnotation]); !e.After(firstExpiry) {
		t.Errorf("the renewed credential expires %v, not after the old one's %v", e, firstExpiry)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
}

// onlyCredential is Keystone's one credential of cluster c, which must be id.
func onlyCredential(t *testing.T, c *cluster, id string) applicationcredentials.ApplicationCredential {
	t.Helper()
	creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid)
	if len(creds) != 1 || creds[0].ID != id {
		t.Fatalf("Keystone has %d credentials for the cluster (%v), want only %s", len(creds), creds, id)
	}
	got, err := applicationcredentials.Get(context.Background(), stack.Keystone.Admin(), stack.Info.User.ID, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return *got
}

func roleNames(ac applicationcredentials.ApplicationCredential) []string {
	var out []string
	for _, r := range ac.Roles {
		out = append(out, r.Name)
	}
	return out
}

func expiryOf(t *testing.T, s string) time.Time {
	t.Helper()
	e, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("the Secret's %s annotation %q: %v", clusters.CredentialExpiresAnnotation, s, err)
	}
	return e
}
