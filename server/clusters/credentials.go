package clusters

import (
	"context"
	"fmt"
	"sort"

	"github.com/magnum-capi/magnum-capi/server/openstack"

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

func credentialSecret(ns, stackID string, owner certs.Owner, cred openstack.Credential) *corev1.Secret {
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

// The application credential's id lives only in the cluster's Secret. A
// sidecar that dies after Keystone made a credential and before the Secret
// holds it leaves a credential nothing refers to. Its name
// (magnum-<cluster uuid>-<hex>) still says whose it is, so every operation
// that is about to make a credential, and delete, first lists the caller's
// credentials named for the cluster and deletes those the Secret does not
// hold. (Listing another user's credentials needs the admin role; a crash
// under one user is cleaned up by that user's next operation on the
// cluster.)

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
	s.sweepOrphans(ctx, caller, spec, "")
	cred, err := s.openstack.CreateCredential(ctx, caller.identity(), spec.Cluster)
	if err != nil {
		return err
	}
	if err := mc.Kube.ApplySecret(ctx, credentialSecret(ns, spec.Cluster.StackID, owner, cred)); err != nil {
		return s.abandonCredential(ctx, caller, spec, cred, err)
	}
	s.log.InfoContext(ctx, "application credential stored in the cluster's Secret", "stack_id", spec.Cluster.StackID, "credential", cred.ID)
	return nil
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

// sweepOrphans deletes the caller's credentials named for the cluster,
// except keep (the one the Secret holds), and returns the caller's
// credentials that remain, by id. It is best effort: a failure to list or
// delete is logged with the ids and does not fail the operation, whose own
// outcome it does not change.
func (s *Service) sweepOrphans(ctx context.Context, caller Caller, spec Spec, keep string) map[string]openstack.CredentialRef {
	refs, err := s.openstack.CallerCredentials(ctx, caller.identity(), spec.Cluster)
	if err != nil {
		s.log.WarnContext(ctx, "could not list the caller's application credentials to find orphans", "stack_id", spec.Cluster.StackID, "err", err)
		return nil
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID < refs[j].ID })
	remaining := map[string]openstack.CredentialRef{}
	for _, ref := range refs {
		if ref.ID == keep {
			remaining[ref.ID] = ref
			continue
		}
		if err := s.openstack.DeleteCallerCredential(ctx, caller.identity(), spec.Cluster, ref); err != nil {
			s.log.ErrorContext(ctx, "orphaned application credential left behind", "stack_id", spec.Cluster.StackID, "credential", ref.ID, "name", ref.Name, "err", err)
			remaining[ref.ID] = ref
			continue
		}
		s.log.WarnContext(ctx, "deleted an orphaned application credential (an earlier operation was interrupted before storing it)",
			"stack_id", spec.Cluster.StackID, "credential", ref.ID, "name", ref.Name)
	}
	return remaining
}

// RotateCredential replaces the cluster's application credential: a new one
// is made as the caller, the Secret is rewritten (CAPO and the cloud
// provider pick it up), then the old one is deleted: with the caller's
// token when it is the caller's, else with the sidecar's service identity.
// Retried after a crash at any point, it converges: the sweep removes a new
// credential that never reached the Secret, or an old one the Secret no
// longer holds.
func (s *Service) RotateCredential(ctx context.Context, caller Caller, spec Spec) error {
	if spec.Cluster.StackID == "" {
		return preconditionf("cluster %s has no stack_id: it was never created by this driver", spec.Cluster.UUID)
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return err
	}
	ns := s.namespace(spec)
	return s.withLock(ctx, mc, ns, spec, func(ctx context.Context) error {
		oldID, err := s.credentialID(ctx, mc, ns, spec.Cluster.StackID)
		if err != nil {
			return err
		}
		mine := s.sweepOrphans(ctx, caller, spec, oldID)
		cred, err := s.openstack.CreateCredential(ctx, caller.identity(), spec.Cluster)
		if err != nil {
			return err
		}
		if err := mc.Kube.ApplySecret(ctx, credentialSecret(ns, spec.Cluster.StackID, ownerOf(ns, spec), cred)); err != nil {
			return s.abandonCredential(ctx, caller, spec, cred, err)
		}
		if oldID != "" && oldID != cred.ID {
			var derr error
			if ref, ok := mine[oldID]; ok {
				derr = s.openstack.DeleteCallerCredential(ctx, caller.identity(), spec.Cluster, ref)
			} else {
				derr = s.openstack.DeleteCredential(ctx, spec.Cluster, oldID)
			}
			if derr != nil {
				return fmt.Errorf("the new application credential %s is in use, but deleting the old one (%s) failed: %w", cred.ID, oldID, derr)
			}
		}
		s.log.InfoContext(ctx, "application credential rotated", "stack_id", spec.Cluster.StackID, "old", oldID, "new", cred.ID)
		return nil
	})
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
