package clusters

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// etcdKeyDataKey is the key of the etcd key Secret the chart reads.
const etcdKeyDataKey = "key"

// etcdKeySecret is the Secret holding a new etcd encryption key: 32 random
// bytes, which the chart writes base64-encoded into the API server's
// EncryptionConfiguration as the secretbox key.
func etcdKeySecret(op *operation) (*corev1.Secret, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("making the etcd encryption key: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: helmvalues.EtcdEncryptionKeySecret(op.stackID()), Namespace: op.ns, Labels: op.owner().Labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{etcdKeyDataKey: key},
	}, nil
}

// ensureEtcdKey makes the cluster's etcd encryption key Secret when values
// turn encryption on and it does not exist yet; an existing key is never
// replaced, since the API server could not read what the old one encrypted.
// For the same reason a missing key of a release deployed with encryption
// on is an error, not a new key. The caller holds the cluster's Lease, so
// nothing else writes the Secret meanwhile; deleting the cluster deletes it
// with the cluster's other Secrets, by their labels.
func (s *Service) ensureEtcdKey(ctx context.Context, op *operation, deployed *release.Release, values map[string]any) error {
	if !helmvalues.EtcdEncryptionEnabled(values) {
		return nil
	}
	name := helmvalues.EtcdEncryptionKeySecret(op.stackID())
	existing, err := op.mc.Kube.GetSecret(ctx, op.ns, name)
	if err != nil {
		return err
	}
	if existing != nil && len(existing.Data[etcdKeyDataKey]) > 0 {
		return nil
	}
	if deployed != nil && helmvalues.EtcdEncryptionEnabled(deployed.Values) {
		return &PreconditionError{Reason: fmt.Sprintf("the etcd encryption key Secret %s/%s is missing: the cluster's Secrets are encrypted with it, and a new key cannot read them; restore it from a backup", op.ns, name)}
	}
	secret, err := etcdKeySecret(op)
	if err != nil {
		return err
	}
	if err := op.mc.Kube.ApplySecret(ctx, secret); err != nil {
		return err
	}
	s.log.InfoContext(ctx, "etcd encryption key made", "stack_id", op.stackID(), "secret", name)
	return nil
}

// etcdEncryption keeps etcd encryption on in values when the deployed
// release has it on (helmvalues.KeepEtcdEncryption), whatever the labels
// say now, and makes sure the key exists when it is on. The deployed
// release is read once per operation (deployedRelease), also by operations
// that carry nothing else of it (a CA rotation).
func (s *Service) etcdEncryption(ctx context.Context, op *operation, values map[string]any) error {
	deployed, err := s.deployedRelease(ctx, op)
	if err != nil {
		return err
	}
	if deployed != nil && helmvalues.KeepEtcdEncryption(deployed.Values, values) {
		s.log.InfoContext(ctx, "etcd encryption stays on: the cluster's Secrets are encrypted", "stack_id", op.stackID())
	}
	return s.ensureEtcdKey(ctx, op, deployed, values)
}
