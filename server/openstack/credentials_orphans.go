package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// CallerCredentials lists the caller's own application credentials named
// for the cluster (magnum-<cluster uuid>-...), with the caller's token: a
// sidecar that died between creating a credential and storing it in the
// cluster's Secret left one of these behind, and only its name says whose
// it is.
func (a *Adapter) CallerCredentials(ctx context.Context, caller Caller, cluster helmvalues.Cluster) ([]CredentialRef, error) {
	if cluster.UUID == "" {
		return nil, &ReferenceError{Field: "cluster.uuid", Value: "", Problem: "required: it names the application credentials"}
	}
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return nil, err
	}
	identity, err := openstack.NewIdentityV3(sess.pc, gophercloud.EndpointOpts{})
	if err != nil {
		return nil, err
	}
	all, err := listAll(ctx, applicationcredentials.List(identity, sess.userID, applicationcredentials.ListOpts{}),
		"identity", "application credential", " of the user", applicationcredentials.ExtractApplicationCredentials)
	if err != nil {
		return nil, err
	}
	prefix := credentialPrefix(cluster.UUID) + "-"
	var out []CredentialRef
	for _, ac := range all {
		if strings.HasPrefix(ac.Name, prefix) {
			out = append(out, CredentialRef{ID: ac.ID, Name: ac.Name})
		}
	}
	return out, nil
}

// DeleteCallerCredential deletes one of the caller's own application
// credentials with the caller's token (any user may delete their own; no
// admin role needed). It refuses one not named for the cluster; already gone
// is success.
func (a *Adapter) DeleteCallerCredential(ctx context.Context, caller Caller, cluster helmvalues.Cluster, ref CredentialRef) error {
	if cluster.UUID == "" || !strings.HasPrefix(ref.Name, credentialPrefix(cluster.UUID)+"-") {
		return &CredentialError{ID: ref.ID, Name: ref.Name, Op: "delete", Problem: fmt.Sprintf(
			"refusing: its name does not start with %s-, so it does not belong to cluster %s", credentialPrefix(cluster.UUID), cluster.UUID)}
	}
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return err
	}
	identity, err := openstack.NewIdentityV3(sess.pc, gophercloud.EndpointOpts{})
	if err != nil {
		return err
	}
	err = applicationcredentials.Delete(ctx, identity, sess.userID, ref.ID).ExtractErr()
	if err == nil || gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		a.log.InfoContext(ctx, "application credential deleted", "credential", ref.ID, "name", ref.Name, "cluster", cluster.UUID, "as", "caller")
		return nil
	}
	return a.leftBehind(ref.ID, ref.Name, apiError(ctx, "identity", "delete an application credential", callerToken, err))
}
