package clusters

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// A deletion's cleanup is recorded in the management cluster, not in a
// sidecar's memory: Delete writes the cluster's cleanup marker, a Secret
// without data named <stack_id>-cleanup, before it uninstalls the release;
// the cleanup reconciler (reconcile.go) deletes it last, once the
// credentials and Secrets are gone. Any sidecar, after any restart, finds
// the work from the marker, and the status path reads it to say whether
// anything is left.
const (
	// CleanupLabel marks a cleanup marker; its value is the stack id.
	CleanupLabel = "magnum-capi.io/cleanup"
	// The cluster's Magnum facts the cleanup needs (it has no Magnum request).
	cleanupUUIDAnnotation    = "magnum-capi.io/cluster-uuid"
	cleanupProjectAnnotation = "magnum-capi.io/project-id"
	cleanupUserAnnotation    = "magnum-capi.io/user-id"
	// The last failed attempt, as the status path reports it.
	cleanupErrorAnnotation     = "magnum-capi.io/cleanup-error"
	cleanupPermanentAnnotation = "magnum-capi.io/cleanup-needs-operator"
)

func cleanupMarkerName(stackID string) string { return stackID + "-cleanup" }

// cleanupMarker is the marker of op's cluster. It carries none of the
// driver's Secret labels, so deleting those Secrets leaves it.
func cleanupMarker(op *operation) *corev1.Secret {
	c := op.spec.Cluster
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: cleanupMarkerName(c.StackID), Namespace: op.ns,
			Labels: map[string]string{CleanupLabel: c.StackID},
			Annotations: map[string]string{
				cleanupUUIDAnnotation: c.UUID, cleanupProjectAnnotation: c.ProjectID, cleanupUserAnnotation: c.UserID,
			},
		},
		Type: corev1.SecretTypeOpaque,
	}
}

// markForCleanup writes the cluster's cleanup marker. A namespace that does
// not exist holds nothing to clean up.
func (s *Service) markForCleanup(ctx context.Context, op *operation) error {
	err := op.mc.Kube.ApplySecret(ctx, cleanupMarker(op))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// specOfMarker is what the cleanup knows of the cluster: its names and owner.
func specOfMarker(m *corev1.Secret) Spec {
	a := m.Annotations
	return Spec{Cluster: helmvalues.Cluster{
		StackID: m.Labels[CleanupLabel], UUID: a[cleanupUUIDAnnotation],
		ProjectID: a[cleanupProjectAnnotation], UserID: a[cleanupUserAnnotation],
	}}
}

// cleanupFailure is a failed attempt as recorded on the marker.
type cleanupFailure struct {
	msg       string
	permanent bool
}

func (e *cleanupFailure) Error() string            { return e.msg }
func (e *cleanupFailure) FailedPrecondition() bool { return e.permanent }

// recordCleanupFailure notes err on the marker for the status path.
func (s *Service) recordCleanupFailure(ctx context.Context, op *operation, err error) error {
	m := cleanupMarker(op)
	m.Annotations[cleanupErrorAnnotation] = err.Error()
	var permanent interface{ FailedPrecondition() bool }
	if errors.As(err, &permanent) && permanent.FailedPrecondition() {
		m.Annotations[cleanupPermanentAnnotation] = "true"
	}
	if werr := op.mc.Kube.ApplySecret(ctx, m); werr != nil {
		return fmt.Errorf("recording the failed cleanup: %w", werr)
	}
	return nil
}

// cleanupLeft reads what is left of a deletion outside Cluster API: nil
// when nothing, else what keeps the cluster from DELETE_COMPLETE. It reads
// only; a deletion without a marker is offered to the reconciler in memory.
func (s *Service) cleanupLeft(ctx context.Context, op *operation) (*cleanupFailure, error) {
	m, err := op.mc.Kube.GetSecret(ctx, op.ns, cleanupMarkerName(op.stackID()))
	if err != nil {
		return nil, err
	}
	if m != nil {
		if msg := m.Annotations[cleanupErrorAnnotation]; msg != "" {
			return &cleanupFailure{msg: msg, permanent: m.Annotations[cleanupPermanentAnnotation] == "true"}, nil
		}
		return &cleanupFailure{msg: cleanupPending}, nil
	}
	// A deletion no marker was written for (an earlier sidecar started
	// it) leaves the driver's Secrets: the reconciler is offered it.
	left, err := op.mc.Kube.HasSecrets(ctx, op.ns, map[string]string{certs.ClusterUUIDLabel: op.spec.Cluster.UUID})
	if err != nil || !left || !strings.HasPrefix(op.spec.Cluster.Status, "DELETE_") {
		return nil, err
	}
	s.offerCleanup(op)
	return &cleanupFailure{msg: cleanupPending}, nil
}

const cleanupPending = "deleting the cluster's application credential and Secrets"
