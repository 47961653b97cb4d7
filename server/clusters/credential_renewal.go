package clusters

import (
	"context"
	"time"
)

// CredentialExpiresAnnotation on the cluster's cloud-credentials Secret is
// when its application credential expires (RFC 3339); absent: never.
const CredentialExpiresAnnotation = "magnum-capi.io/credential-expires-at"

// credentialRenewalDue says whether a credential expiring at expires (zero:
// never) is to be renewed at now, before bounding how early.
func credentialRenewalDue(expires, now time.Time, before time.Duration) bool {
	return !expires.IsZero() && !now.Before(expires.Add(-before))
}

// renewCredentialIfDue rotates the cluster's application credential when it
// expires within Config.CredentialRenewBefore, when the caller is of the
// cluster's project (caller_project.go). Keystone lets only its owner
// make a credential, with an unscoped-by-trust token, so the sidecar renews
// in the operations that carry the user's token (create, update, resize,
// upgrade); `openstack coe credential rotate` renews at any time. A failed
// renewal does not fail the operation (the credential is still valid): it is
// logged and tried again on the next one. The caller holds the Lease.
func (s *Service) renewCredentialIfDue(ctx context.Context, caller Caller, op *operation) {
	secret, err := op.mc.Kube.GetSecret(ctx, op.ns, credentialSecretName(op.stackID()))
	if err != nil || secret == nil {
		return
	}
	expires, err := time.Parse(time.RFC3339, secret.Annotations[CredentialExpiresAnnotation])
	if err != nil || !credentialRenewalDue(expires, s.now(), s.cfg.CredentialRenewBefore) {
		return
	}
	if !caller.inProjectOf(op.spec) {
		// Keystone would make the new credential in the caller's project.
		s.log.WarnContext(ctx, "application credential expires soon; not renewed: the request is from another project, a user of the cluster's project renews it",
			"stack_id", op.stackID(), "expires", expires, "caller_project", caller.ProjectID)
		return
	}
	s.log.InfoContext(ctx, "application credential expires soon; renewing it", "stack_id", op.stackID(), "expires", expires)
	if err := s.rotateCredential(ctx, caller, op); err != nil {
		s.log.WarnContext(ctx, "renewing the application credential failed; the next operation tries again", "stack_id", op.stackID(), "expires", expires, "err", err)
	}
}
