package clusters

import (
	"bytes"
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rollbackTimeout bounds putting the old CA Secrets back after the caller's
// deadline passed: it fits in the part of the deadline the gRPC layer keeps
// for what follows a failure (server/interceptors.go, answerReserve).
const rollbackTimeout = 2 * time.Second

// caSecretsBefore are the cluster's CA Secrets as a rotation found them, by
// name (nil for one that did not exist), and whether they already held the
// new material (a rotation retried after its change was applied).
type caSecretsBefore struct {
	secrets map[string]*corev1.Secret
	same    bool
}

// readCASecrets reads the CA Secrets the rotation is about to replace.
func (s *Service) readCASecrets(ctx context.Context, op *operation, next []*corev1.Secret) (caSecretsBefore, error) {
	b := caSecretsBefore{secrets: map[string]*corev1.Secret{}, same: true}
	for _, n := range next {
		cur, err := op.mc.Kube.GetSecret(ctx, op.ns, n.Name)
		if err != nil {
			return b, err
		}
		b.secrets[n.Name] = cur
		b.same = b.same && cur != nil && sameData(cur.Data, n.Data)
	}
	return b, nil
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// rollBackCA puts the CA Secrets back as they were before a rotation that
// failed before Helm wrote the release (cause), even past the caller's
// deadline, so the management cluster keeps the CA Magnum keeps. When they
// cannot be put back, or already held the new material, the new CA stays:
// the answer is an AppliedError, so Magnum keeps it too. switched says the
// kubeconfig was deleted with the new CA in place: Cluster API may have
// issued one from it, so it goes again, to be issued from the old.
func (s *Service) rollBackCA(ctx context.Context, op *operation, before caSecretsBefore, next []*corev1.Secret, switched bool, cause error) error {
	if before.same {
		return &AppliedError{Change: "the new CA", Err: cause}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	restores := make([]func() error, len(next))
	for i, n := range next {
		old := before.secrets[n.Name]
		restores[i] = func() error {
			if old == nil {
				return op.mc.Kube.DeleteSecret(rctx, op.ns, n.Name)
			}
			return op.mc.Kube.ApplySecret(rctx, restorable(old))
		}
	}
	if err := allOf(rctx, s.logger(ctx), restores...); err != nil {
		s.logger(ctx).ErrorContext(ctx, "the CA rotation failed and the old CA Secrets could not be put back; the new CA stays",
			"stack_id", op.stackID(), "cause", cause, "err", err)
		return &AppliedError{Change: "part of the new CA", Err: cause}
	}
	if switched {
		if err := op.mc.Kube.DeleteSecret(rctx, op.ns, op.stackID()+"-kubeconfig"); err != nil {
			s.logger(ctx).ErrorContext(ctx, "the old CA Secrets are back, but the kubeconfig Cluster API may have issued from the new CA could not be deleted",
				"stack_id", op.stackID(), "err", err)
		}
	}
	s.logger(ctx).WarnContext(ctx, "the CA rotation failed before Helm wrote the release; the old CA Secrets are back", "stack_id", op.stackID(), "cause", cause)
	return cause
}

// restorable is old as server-side apply takes it back: its content, not
// its server-set metadata.
func restorable(old *corev1.Secret) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: old.Namespace, Name: old.Name, Labels: old.Labels, Annotations: old.Annotations},
		Type:       old.Type, Data: old.Data,
	}
}
