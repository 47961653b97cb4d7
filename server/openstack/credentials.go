package openstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// credentialPrefix is the start of every name this driver (and StackHPC's)
// gives a cluster's application credential: magnum-<cluster uuid>-<8 hex>.
func credentialPrefix(clusterUUID string) string { return "magnum-" + clusterUUID }

// CreateCredential makes an application credential as the caller: Keystone
// only lets users create their own, on the token's project. It gets the
// token's roles that Config.CredentialRoles allows (all of them when that is
// empty), expires after Config.CredentialLifetime (never when 0), and is
// restricted (it cannot create other credentials or trusts).
func (a *Adapter) CreateCredential(ctx context.Context, caller Caller, cluster helmvalues.Cluster) (Credential, error) {
	if cluster.UUID == "" {
		return Credential{}, &ReferenceError{Field: "cluster.uuid", Value: "", Problem: "required: it names the application credential"}
	}
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return Credential{}, err
	}
	identity, err := openstack.NewIdentityV3(sess.pc, gophercloud.EndpointOpts{})
	if err != nil {
		return Credential{}, err
	}
	roleNames, err := credentialRoles(a.cfg.CredentialRoles, sess.roles)
	if err != nil {
		return Credential{}, err
	}
	var roles []applicationcredentials.Role
	for _, r := range roleNames {
		roles = append(roles, applicationcredentials.Role{Name: r})
	}
	description := fmt.Sprintf("Magnum cluster (%s)", first(cluster.Name, cluster.UUID))
	expires := credentialExpiry(time.Now(), a.cfg.CredentialLifetime)
	var ac *applicationcredentials.ApplicationCredential
	// A name clash (409) means the random suffix repeated; one retry with
	// a new one is enough.
	for attempt := 0; ; attempt++ {
		name := credentialPrefix(cluster.UUID) + "-" + randomHex(4)
		ac, err = applicationcredentials.Create(ctx, identity, sess.userID, applicationcredentials.CreateOpts{
			Name: name, Description: description, Unrestricted: false, Roles: roles, ExpiresAt: expires,
		}).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusConflict) && attempt == 0 {
			continue
		}
		break
	}
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		return Credential{}, &CredentialError{Op: "create", Err: err, Problem: fmt.Sprintf(
			"Keystone refused user %s (403): a token that is itself an application credential or a trust cannot create one, and the user needs a role on project %s",
			sess.userID, sess.projectID)}
	case err != nil:
		return Credential{}, apiError(ctx, "identity", "create an application credential", callerToken, err)
	}
	clouds, err := cloudsYAML(a.clusterCloud(caller, sess), ac.ID, ac.Secret)
	if err != nil {
		a.abandon(ctx, identity, sess.userID, ac.ID)
		return Credential{}, fmt.Errorf("openstack: rendering clouds.yaml for application credential %s: %w", ac.ID, err)
	}
	a.log.InfoContext(ctx, "application credential created", "credential", ac.ID, "name", ac.Name,
		"cluster", cluster.UUID, "user", sess.userID, "project", sess.projectID, "roles", roleNames, "expires", expires, "request_id", caller.RequestID)
	cred := Credential{ID: ac.ID, Name: ac.Name, CloudsYAML: clouds, CACert: a.caPEM, ExpiresAt: ac.ExpiresAt}
	for _, r := range ac.Roles {
		cred.Roles = append(cred.Roles, r.Name)
	}
	return cred, nil
}

// abandon deletes a credential the caller just made and cannot hand over.
func (a *Adapter) abandon(ctx context.Context, identity *gophercloud.ServiceClient, userID, id string) {
	if err := applicationcredentials.Delete(context.WithoutCancel(ctx), identity, userID, id).ExtractErr(); err != nil {
		a.log.ErrorContext(ctx, "application credential left behind", "credential", id, "user", userID, "err", err)
	}
}

// clusterCloud is where the cluster's clouds.yaml points: Keystone's URL from
// the request, the configuration, the token's catalog (public identity
// endpoint), or the service cloud, in that order.
func (a *Adapter) clusterCloud(caller Caller, sess *callerSession) clusterCloud {
	authURL := first(caller.AuthURL, a.cfg.AuthURL, publicIdentityURL(sess.catalog, a.region(caller)))
	if authURL == "" && a.cloud != nil {
		authURL = a.cloud.AuthInfo.AuthURL
	}
	return clusterCloud{AuthURL: authURL, Region: a.region(caller), Interface: a.cfg.clusterInterface(), Verify: a.cfg.verify()}
}

func publicIdentityURL(c *tokens.ServiceCatalog, region string) string {
	if c == nil {
		return ""
	}
	for _, e := range c.Entries {
		if e.Type != "identity" {
			continue
		}
		for _, ep := range e.Endpoints {
			if ep.Interface == "public" && (region == "" || ep.Region == region || ep.RegionID == region) {
				return ep.URL
			}
		}
	}
	return ""
}

// DeleteCredential deletes a cluster's application credential with the
// service identity, after checking that its name starts with
// magnum-<cluster uuid>. Gone already (404) is success. Keystone's 403 (the
// service identity lacks the admin role) is an error saying the credential
// was left, never silence.
//
// The credential is addressed as /v3/users/{cluster.UserID}/... . Keystone
// 22 (Zed) only uses that user id for the policy check and finds the
// credential by id, so a delete after the cluster changed owner works
// (TestDeleteCredentialAfterOwnerChange); a Keystone that checked the path's
// user would need the credential's creator there.
func (a *Adapter) DeleteCredential(ctx context.Context, cluster helmvalues.Cluster, credentialID string) error {
	if credentialID == "" {
		return &CredentialError{Op: "delete", Problem: "no application credential id given"}
	}
	if cluster.UUID == "" {
		return &CredentialError{ID: credentialID, Op: "delete", Problem: "the cluster has no uuid to check the credential's name against; not deleting"}
	}
	pc, err := a.serviceClient(ctx)
	if err != nil {
		return a.leftBehind(credentialID, "", err)
	}
	identity, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return a.leftBehind(credentialID, "", err)
	}
	owner := cluster.UserID
	if owner == "" {
		owner = serviceUserID(pc)
	}
	ac, err := applicationcredentials.Get(ctx, identity, owner, credentialID).Extract()
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		a.log.InfoContext(ctx, "application credential already gone", "credential", credentialID, "cluster", cluster.UUID)
		return nil
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		return a.forbidden(credentialID, "", "read", err)
	case err != nil:
		return a.leftBehind(credentialID, "", apiError(ctx, "identity", "read an application credential", a.serviceIdentity(), err))
	}
	if !strings.HasPrefix(ac.Name, credentialPrefix(cluster.UUID)) {
		return &CredentialError{ID: credentialID, Name: ac.Name, Op: "delete", Problem: fmt.Sprintf(
			"refusing: its name does not start with %s, so it does not belong to cluster %s", credentialPrefix(cluster.UUID), cluster.UUID)}
	}
	err = applicationcredentials.Delete(ctx, identity, owner, credentialID).ExtractErr()
	switch {
	case err == nil, gophercloud.ResponseCodeIs(err, http.StatusNotFound):
		a.log.InfoContext(ctx, "application credential deleted", "credential", credentialID, "name", ac.Name, "cluster", cluster.UUID)
		return nil
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		return a.forbidden(credentialID, ac.Name, "delete", err)
	}
	return a.leftBehind(credentialID, ac.Name, apiError(ctx, "identity", "delete an application credential", a.serviceIdentity(), err))
}

// forbidden explains Keystone's 403 to the operator: what is left and what
// the service identity needs.
func (a *Adapter) forbidden(id, name, op string, err error) error {
	return &CredentialError{ID: id, Name: name, Op: "delete", Left: true, Err: err, Problem: fmt.Sprintf(
		"Keystone refused to let %s %s it (403 Forbidden); deleting another user's application credential needs the admin role "+
			"(policy identity:delete_application_credential); delete it by hand with: openstack application credential delete %s",
		a.serviceIdentity(), op, id)}
}

// leftBehind wraps a failure that kept the credential in Keystone, keeping
// the cause's class (Unavailable, FailedPrecondition) for errors.As.
func (a *Adapter) leftBehind(id, name string, cause error) error {
	what := "application credential " + id
	if name != "" {
		what += " (" + name + ")"
	}
	return fmt.Errorf("%s was not deleted and is left in Keystone: %w", what, cause)
}

// serviceUserID is the service identity's own user id, from its token.
func serviceUserID(pc *gophercloud.ProviderClient) string {
	if res, ok := pc.GetAuthResult().(tokens.CreateResult); ok {
		if u, err := res.ExtractUser(); err == nil && u != nil {
			return u.ID
		}
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go ≥ 1.24)
	return hex.EncodeToString(b)
}
