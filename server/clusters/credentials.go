package clusters

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/certs"
)

// Keys of the <stack_id>-cloud-credentials Secret, as the chart and the
// StackHPC driver use them.
const (
	cloudsYAMLKey = "clouds.yaml"
	cacertKey     = "cacert"
)

func credentialSecretName(stackID string) string { return stackID + "-cloud-credentials" }

func credentialSecret(ns, stackID string, owner certs.Owner, cred Credential) *corev1.Secret {
	data := map[string][]byte{cloudsYAMLKey: cred.CloudsYAML}
	if len(cred.CACert) > 0 {
		data[cacertKey] = cred.CACert
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: credentialSecretName(stackID), Namespace: ns, Labels: owner.Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// ensureCredential makes sure the cluster has an application credential and
// its Secret. An existing Secret is kept: a retried create must not mint a
// second credential.
func (s *Service) ensureCredential(ctx context.Context, caller Caller, mc *ManagementCluster, ns string, spec Spec, owner certs.Owner) error {
	existing, err := mc.Kube.GetSecret(ctx, ns, credentialSecretName(spec.Cluster.StackID))
	if err != nil {
		return err
	}
	if existing != nil && len(existing.Data[cloudsYAMLKey]) > 0 {
		return nil
	}
	cred, err := s.openstack.CreateCredential(ctx, caller, spec.Cluster)
	if err != nil {
		return err
	}
	if err := mc.Kube.ApplySecret(ctx, credentialSecret(ns, spec.Cluster.StackID, owner, cred)); err != nil {
		// Do not leave a credential nobody can find: its id lives only in
		// the Secret we failed to write.
		if derr := s.openstack.DeleteCredential(context.WithoutCancel(ctx), spec.Cluster, cred.ID); derr != nil {
			s.log.ErrorContext(ctx, "application credential left behind", "credential", cred.ID, "err", derr)
			return fmt.Errorf("%w (and deleting application credential %s failed: %v)", err, cred.ID, derr)
		}
		return err
	}
	s.log.InfoContext(ctx, "application credential created", "stack_id", spec.Cluster.StackID, "credential", cred.ID)
	return nil
}

// credentialID reads the cluster's credential id from its Secret; "" when
// there is no Secret.
func (s *Service) credentialID(ctx context.Context, mc *ManagementCluster, ns, stackID string) (string, error) {
	secret, err := mc.Kube.GetSecret(ctx, ns, credentialSecretName(stackID))
	if err != nil || secret == nil {
		return "", err
	}
	return s.openstack.CredentialIDFromClouds(secret.Data[cloudsYAMLKey])
}
