package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"k8s.io/apimachinery/pkg/util/wait"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
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

// TestCredentialWatch: a cluster nobody of its project touches inside the
// renewal window is found by the credential watch of a sidecar that starts
// after it (the watch lists at start, then every 10 minutes): its health
// carries the "credential" reason saying when it expires and what a member
// of the project does, and the metric has a series for it. A rotation by a
// member of the project clears the reason at once.
func TestCredentialWatch(t *testing.T) {
	t.Parallel() // its own sidecars and cluster; with the other parallel tests, after the sequential ones
	renewal := func(c *config.Config) {
		c.OpenStack.ApplicationCredentialLifetime = time.Hour
		c.OpenStack.ApplicationCredentialRenewBefore = time.Hour - time.Second
	}
	creator := startSidecar(t, harness.SidecarOptions{Name: "watch-creator", Configure: renewal})
	c := newCluster(t, "credwatch", "v1.33.2", 1)
	stackID := c.create(t, creator.Driver)
	t.Cleanup(func() { c.remove(t, creator.Driver) })
	c.waitOn(t, creator.Driver, "CREATE_COMPLETE", 3*time.Minute)

	watcher := startSidecar(t, harness.SidecarOptions{Name: "watch-watcher", Configure: renewal, Metrics: true})
	reason := func() string {
		ctx, cancel := callCtx()
		defer cancel()
		h, err := watcher.Driver.GetClusterHealth(ctx, &pb.GetClusterHealthRequest{Spec: c.spec})
		if err != nil {
			t.Fatalf("GetClusterHealth: %v", err)
		}
		return h.GetHealthStatusReason()["credential"]
	}
	var got string
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		got = reason()
		return got != "", nil
	})
	if !strings.Contains(got, "expires at") || !strings.Contains(got, "openstack coe credential rotate") {
		t.Fatalf("health reason credential = %q, want when it expires and what to do", got)
	}
	series := sample(scrape(t, watcher.MetricsURL), "magnum_capi_credential_expiry_timestamp_seconds", map[string]string{"stack_id": stackID, "namespace": projectNamespace()})
	if series == nil || time.Until(time.Unix(int64(series.GetGauge().GetValue()), 0)) > time.Hour {
		t.Errorf("no expiry series within the hour for %s: %v", stackID, series)
	}

	ctx, cancel := callCtx()
	_, err := watcher.Driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if got := reason(); got != "" {
		t.Errorf("after the rotation the health still says %q", got)
	}
}
