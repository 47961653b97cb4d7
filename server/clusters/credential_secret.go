package clusters

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// The cluster's application credential lives in Keystone; its clouds.yaml
// lives in the <stack_id>-cloud-credentials Secret, where CAPO and the
// cloud provider read it. Keys of that Secret, as the chart and the
// StackHPC driver use them:
const (
	cloudsYAMLKey = "clouds.yaml"
	cacertKey     = "cacert"
)

func credentialSecretName(stackID string) string { return stackID + "-cloud-credentials" }

func credentialSecret(ns, stackID string, owner certs.Owner, cred openstack.Credential) *corev1.Secret {
	data := map[string][]byte{cloudsYAMLKey: cred.CloudsYAML}
	if len(cred.CACert) > 0 {
		data[cacertKey] = cred.CACert
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credentialSecretName(stackID), Namespace: ns, Labels: owner.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	if !cred.ExpiresAt.IsZero() {
		secret.Annotations = map[string]string{CredentialExpiresAnnotation: cred.ExpiresAt.UTC().Format(time.RFC3339)}
	}
	return secret
}

// ensureCredential makes sure the cluster has an application credential and
// its Secret. An existing Secret is kept: a retried create must not mint a
// second credential. The caller holds the cluster's Lease.
func (s *Service) ensureCredential(ctx context.Context, caller Caller, op *operation) error {
	existing, err := op.mc.Kube.GetSecret(ctx, op.ns, credentialSecretName(op.stackID()))
	if err != nil {
		return err
	}
	if existing != nil && len(existing.Data[cloudsYAMLKey]) > 0 {
		s.renewCredentialIfDue(ctx, caller, op)
		return nil
	}
	if !caller.inProjectOf(op.spec) {
		return &NoProjectIdentityError{}
	}
	s.sweepOrphans(ctx, caller, op.spec, "")
	_, err = s.storeNewCredential(ctx, caller, op)
	return err
}

// storeNewCredential makes a credential as the caller and writes it into
// the cluster's Secret; one whose Secret could not be written is deleted
// at once (abandonCredential).
func (s *Service) storeNewCredential(ctx context.Context, caller Caller, op *operation) (openstack.Credential, error) {
	cred, err := s.openstack.CreateCredential(ctx, caller.identity(), op.spec.Cluster)
	if err != nil {
		return cred, err
	}
	if err := op.mc.Kube.ApplySecret(ctx, credentialSecret(op.ns, op.stackID(), op.owner(), cred)); err != nil {
		return cred, s.abandonCredential(ctx, caller, op.spec, cred, err)
	}
	s.log.InfoContext(ctx, "application credential stored in the cluster's Secret", "stack_id", op.stackID(), "credential", cred.ID)
	return cred, nil
}

// abandonCredential deletes a credential just made whose Secret could not be
// written, so it does not wait for the next sweep; cause is returned, with
// the credential named if it could not be deleted either.
func (s *Service) abandonCredential(ctx context.Context, caller Caller, spec Spec, cred openstack.Credential, cause error) error {
	derr := s.openstack.DeleteCallerCredential(context.WithoutCancel(ctx), caller.identity(), spec.Cluster, openstack.CredentialRef{ID: cred.ID, Name: cred.Name})
	if derr != nil {
		s.log.ErrorContext(ctx, "application credential left behind", "stack_id", spec.Cluster.StackID, "credential", cred.ID, "err", derr)
		return fmt.Errorf("%w (and deleting application credential %s failed: %v)", cause, cred.ID, derr)
	}
	return cause
}

// credentialID reads the cluster's credential id from its Secret; "" when
// there is no Secret.
func (s *Service) credentialID(ctx context.Context, op *operation) (string, error) {
	secret, err := op.mc.Kube.GetSecret(ctx, op.ns, credentialSecretName(op.stackID()))
	if err != nil || secret == nil {
		return "", err
	}
	return s.openstack.CredentialIDFromClouds(secret.Data[cloudsYAMLKey])
}
