package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/magnum-capi/magnum-capi/certs"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// TestCreateRefusedByKeystone: the real Keystone refuses the cluster's
// application credential (the caller's token is itself a restricted
// application credential, which may not make another). The create fails
// with Keystone's reason and nothing of the release is written: no Helm
// record, no CAPI Cluster, no credential in Keystone or in a Secret, no
// Lease. What it made before the credential (the namespace, the server
// groups) and beside it (the CA Secrets) goes when the user deletes the
// CREATE_FAILED cluster.
//
// A shortcut a cloud would not take: the sidecar is called directly. Magnum
// makes the cluster's trust with the same token before it calls the driver,
// and Keystone refuses that too, so through magnum-api this token would stop
// in Magnum; a caller whose roles Keystone will not delegate reaches this
// same refusal through Magnum.
func TestCreateRefusedByKeystone(t *testing.T) {
	c := newCluster(t, "acrefused", "v1.33.2", 1)
	passwordToken := c.ctx.AuthToken
	c.ctx.AuthToken = applicationCredentialToken(t)

	before := footprintOf(t, c.owner())
	existing := serverGroupIDs()
	ctx, cancel := callCtx()
	_, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	st := status.Convert(err)
	if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "403") || !strings.Contains(st.Message(), "application credential") {
		t.Fatalf("create with an application-credential token: %v; want FailedPrecondition naming Keystone's 403 and the application credential", err)
	}
	if strings.Contains(st.Message(), c.ctx.AuthToken) || strings.Contains(st.Message(), stack.Info.AuthURL) {
		t.Errorf("the tenant's message quotes the token or Keystone's endpoint: %q", st.Message())
	}

	// The stack_id the create never returned is in the server groups' names.
	stackID := stackIDOfNewGroups(existing)
	if stackID == "" {
		t.Fatal("the refused create made no control plane group: the credential is made after the server groups")
	}
	c.spec.Cluster.StackId = stackID
	allowed := map[string]bool{"added default Namespace " + projectNamespace(): true}
	// The CA Secrets are written beside the credential, not after it.
	for _, p := range []certs.Purpose{certs.ClusterCA, certs.EtcdCA, certs.FrontProxyCA, certs.ServiceAccount} {
		allowed["added default Secret "+projectNamespace()+"/"+certs.SecretName(stackID, p)] = true
	}
	for _, change := range before.changes(footprintOf(t, c.owner())) {
		switch {
		case allowed[change], strings.HasPrefix(change, "added nova ServerGroup "+stackID+"-"):
		default:
			t.Errorf("the refused create wrote more than the namespace, server groups and CA Secrets: %s", change)
		}
	}

	// Magnum marks it CREATE_FAILED and the user deletes it, logged in with
	// a password this time.
	c.ctx.AuthToken = passwordToken
	removeRefused(t, c, stackID, before)
}

// applicationCredentialToken logs in as the test user with a restricted
// application credential, as a user whose clouds.yaml holds one does, and
// returns the token; the credential is deleted when the test ends.
func applicationCredentialToken(t *testing.T) string {
	t.Helper()
	identity := userIdentity(t)
	ac, err := applicationcredentials.Create(context.Background(), identity, stack.Info.User.ID, applicationcredentials.CreateOpts{
		Name: "cli-" + time.Now().Format("150405.000"),
	}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := applicationcredentials.Delete(context.Background(), identity, stack.Info.User.ID, ac.ID).ExtractErr(); err != nil {
			t.Errorf("deleting the login credential %s: %v", ac.ID, err)
		}
	})
	pc, err := openstack.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{
		IdentityEndpoint: stack.Info.AuthURL, ApplicationCredentialID: ac.ID, ApplicationCredentialSecret: ac.Secret,
	})
	if err != nil {
		t.Fatal(err)
	}
	return pc.TokenID
}
