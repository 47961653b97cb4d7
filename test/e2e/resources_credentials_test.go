package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/chartrepo"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/keystone"
)

// TestCredentialLifecycle, against the real Keystone: create makes one
// application credential whose clouds.yaml (in the cluster's Secret, with
// the private CA under cacert) authenticates; rotation makes a new one
// that authenticates and deletes the old one; after DELETE_COMPLETE neither
// the credential nor the Secret is left.
func TestCredentialLifecycle(t *testing.T) {
	// A cloud with a private CA: the Secret must carry it.
	repo, err := chartrepo.StartHTTP(chartrepo.HTTPOptions{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	withCA := startSidecar(t, harness.SidecarOptions{Name: "private-ca", Configure: func(c *config.Config) { c.OpenStack.CAFile = repo.CAFile() }})

	c := newCluster(t, "creds", "v1.33.2", 1)
	stackID := c.create(t, withCA.Driver)
	ns := projectNamespace()
	secret := credentialSecret(t, ns, stackID)
	if !bytes.Equal(secret.Data["cacert"], repo.CAPEM()) {
		t.Errorf("the Secret's cacert is %d bytes, want the configured CA", len(secret.Data["cacert"]))
	}
	first := authenticates(t, secret)
	creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid)
	if len(creds) != 1 || creds[0].ID != first {
		t.Fatalf("Keystone has %v for the cluster, want only %s", creds, first)
	}

	ctx, cancel := callCtx()
	_, err = withCA.Driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("RotateCredential: %v", err)
	}
	second := authenticates(t, credentialSecret(t, ns, stackID))
	if second == first {
		t.Fatal("the rotation kept the credential")
	}
	if inKeystone(t, first) {
		t.Errorf("the rotated-out credential %s is still in Keystone", first)
	}
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 1 || creds[0].ID != second {
		t.Errorf("Keystone has %v for the cluster after rotation, want only %s", creds, second)
	}

	c.waitOn(t, withCA.Driver, "CREATE_COMPLETE", 3*time.Minute)
	c.remove(t, withCA.Driver)
	if inKeystone(t, second) {
		t.Errorf("credential %s left after DELETE_COMPLETE", second)
	}
	var s corev1.Secret
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-cloud-credentials"}, &s); err == nil {
		t.Error("the credentials Secret outlived DELETE_COMPLETE")
	}
}

// TestCredentialDeleteOutcomes: a credential someone already deleted (404)
// does not hold up DELETE_COMPLETE. (One the cleanup is refused ends the
// cluster in DELETE_FAILED naming it: TestCleanupReconciler in
// server/clusters.)
func TestCredentialDeleteOutcomes(t *testing.T) {
	ns := projectNamespace()
	c := newCluster(t, "cred-404", "v1.33.2", 1)
	stackID := c.create(t, driver)
	id := authenticates(t, credentialSecret(t, ns, stackID))
	if err := applicationcredentials.Delete(context.Background(), stack.Keystone.Admin(), stack.Info.User.ID, id).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	c.remove(t, driver)
}

// TestOrphanedCredentialsSwept: a credential Keystone made but no Secret
// holds (the sidecar died in between) does not leak. Killed for real
// between the two steps of a create, the retried create deletes it; left
// by an interrupted rotation or create, the next rotation or the delete
// does.
func TestOrphanedCredentialsSwept(t *testing.T) {
	ns := projectNamespace()
	c := newCluster(t, "orphans", "v1.33.2", 1)

	// The victim is held, and killed, at its write of the credentials
	// Secret: Keystone has the credential, nothing records it.
	proxy := startKubeProxy(t, stack.Env.Config)
	victim := startSidecar(t, harness.SidecarOptions{Name: "orphaner", Binary: sidecarBinary(t),
		Configure: withKubeconfig(proxy.kubeconfig(t, "orphaner")), Env: []string{"MAGNUM_CAPI_TIMEOUTS_LOCK=5s"}})
	trapped := proxy.arm(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "-cloud-credentials")
	})
	go func() {
		ctx, cancel := callCtx()
		defer cancel()
		_, _ = victim.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	}()
	select {
	case <-trapped:
	case <-time.After(45 * time.Second):
		t.Fatal("the victim never wrote the credentials Secret")
	}
	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	orphans := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid)
	if len(orphans) != 1 {
		t.Fatalf("after the kill Keystone has %d credentials for the cluster, want the 1 orphan", len(orphans))
	}

	stackID := c.create(t, driver)
	stored := authenticates(t, credentialSecret(t, ns, stackID))
	if inKeystone(t, orphans[0].ID) {
		t.Errorf("the orphan %s survived the retried create", orphans[0].ID)
	}
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 1 || creds[0].ID != stored {
		t.Errorf("after the retried create Keystone has %v, want only the stored %s", creds, stored)
	}

	// An interrupted rotation's orphan goes with the next rotation.
	orphan := orphanCredential(t, c.spec.Cluster.Uuid)
	ctx, cancel := callCtx()
	_, err := driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	rotated := authenticates(t, credentialSecret(t, ns, stackID))
	if inKeystone(t, orphan) || inKeystone(t, stored) {
		t.Errorf("after the rotation the orphan (%v) or the old credential (%v) is still in Keystone", inKeystone(t, orphan), inKeystone(t, stored))
	}

	// Delete sweeps orphans at once, and keeps the stored credential until
	// Cluster API no longer needs it.
	orphan = orphanCredential(t, c.spec.Cluster.Uuid)
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel = callCtx()
	_, err = driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if inKeystone(t, orphan) {
		t.Errorf("DeleteCluster left the orphan %s", orphan)
	}
	if !inKeystone(t, rotated) {
		t.Errorf("DeleteCluster deleted the credential %s Cluster API still needs", rotated)
	}
	c.waitOn(t, driver, "DELETE_COMPLETE", 3*time.Minute)
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 0 {
		t.Errorf("%d credentials left after DELETE_COMPLETE", len(creds))
	}
}

func credentialSecret(t *testing.T, ns, stackID string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-cloud-credentials"}, &s); err != nil {
		t.Fatalf("credentials Secret: %v", err)
	}
	return &s
}

// authenticates logs in to Keystone with the Secret's clouds.yaml, as CAPO
// does, and returns the credential's id.
func authenticates(t *testing.T, s *corev1.Secret) string {
	t.Helper()
	var doc struct {
		Clouds map[string]struct {
			Auth struct {
				AuthURL string `json:"auth_url"`
				ID      string `json:"application_credential_id"`
				Secret  string `json:"application_credential_secret"`
			} `json:"auth"`
			AuthType string `json:"auth_type"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal(s.Data["clouds.yaml"], &doc); err != nil {
		t.Fatalf("clouds.yaml of %s: %v", s.Name, err)
	}
	cloud, ok := doc.Clouds["openstack"]
	if !ok || cloud.AuthType != "v3applicationcredential" {
		t.Fatalf("clouds.yaml of %s has no application-credential cloud named openstack", s.Name)
	}
	ao := gophercloud.AuthOptions{
		IdentityEndpoint: cloud.Auth.AuthURL, ApplicationCredentialID: cloud.Auth.ID, ApplicationCredentialSecret: cloud.Auth.Secret,
	}
	if _, err := openstack.AuthenticatedClient(context.Background(), ao); err != nil {
		t.Fatalf("the clouds.yaml in %s does not authenticate: %v", s.Name, err)
	}
	return ao.ApplicationCredentialID
}

// inKeystone says whether Keystone still has the user's credential id.
func inKeystone(t *testing.T, id string) bool {
	t.Helper()
	_, err := applicationcredentials.Get(context.Background(), stack.Keystone.Admin(), stack.Info.User.ID, id).Extract()
	if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// orphanCredential makes, as the user, what an interrupted operation
// leaves: a credential named for the cluster that no Secret holds.
func orphanCredential(t *testing.T, clusterUUID string) string {
	t.Helper()
	ac, err := applicationcredentials.Create(context.Background(), userIdentity(t), stack.Info.User.ID, applicationcredentials.CreateOpts{
		Name: "magnum-" + clusterUUID + "-0rphan" + time.Now().Format("150405"),
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return ac.ID
}

// userIdentity is Keystone's identity API as the test user, logged in with
// a password.
func userIdentity(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	return identityOf(t, stack.Info.User)
}

// TestOrphanOfAnotherUserGoesWithTheCluster: a credential named for the
// cluster that another member of the project made and no Secret holds
// (their rotation was interrupted, or its delete of the old credential
// failed) is invisible to the sweep of the caller's own; the cleanup at
// DELETE_COMPLETE finds it by name among every user of the project and
// deletes it with the service identity.
func TestOrphanOfAnotherUserGoesWithTheCluster(t *testing.T) {
	c := newCluster(t, "colleague", "v1.33.2", 1)
	c.create(t, driver)
	ctx := context.Background()
	project := keystone.Project{ID: stack.Info.Project.ID, Name: stack.Info.Project.Name}
	colleague, err := stack.Keystone.CreateUser(ctx, "colleague-"+time.Now().Format("150405.000"), project, "member")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := applicationcredentials.Create(ctx, identityOf(t, colleague), colleague.ID, applicationcredentials.CreateOpts{
		Name: "magnum-" + c.spec.Cluster.Uuid + "-c011eag",
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	c.remove(t, driver)
	if left := credentialsOf(t, colleague.ID, c.spec.Cluster.Uuid); len(left) > 0 {
		t.Errorf("at DELETE_COMPLETE the colleague's credential %s named for the cluster is still in Keystone", theirs.ID)
	}
}

// identityOf is Keystone's identity API as user u, logged in with a
// password to its project.
func identityOf(t *testing.T, u keystone.User) *gophercloud.ServiceClient {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: stack.Info.AuthURL, Username: u.Name, Password: u.Password, DomainID: "default", TenantID: u.ProjectID,
	})
	if err != nil {
		t.Fatal(err)
	}
	identity, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return identity
}
