package clusters

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// The Argo CD hand-off's reconciler keeps each cluster's Argo CD Secret as
// its template wants it: written from the admin kubeconfig Cluster API
// issued once the cluster's API is up, written again when the kubeconfig
// or the Magnum facts change, deleted when the template turns the hand-off
// off or the cluster's deletion starts. It is driven by the watch caches'
// Cluster and control plane events (a restart's first list included), by
// the Magnum facts a status poll offers (offerHandOff), by a CA rotation,
// and by a daily refresh; the facts and what was written are recorded in
// the management cluster (gitops_record.go). It never changes a cluster's
// status: a failure is logged, counted and retried.

// watchChanges has each watch cache tell the hand-off's queue of the
// clusters whose Cluster or control plane changes.
func (s *Service) watchChanges() {
	if s.gitops == nil {
		return
	}
	for _, mc := range s.mgmt {
		if mc.Cache == nil {
			continue
		}
		mc.Cache.OnChange(func(ns, stackID string) { s.gitops.queue.Add(clusterKey{mc.Name, ns, stackID}) })
	}
}

// reconcileGitOps brings one cluster's Argo CD Secret and record to what
// its facts and Cluster API's objects say. Idempotent: what is already as
// wanted is not written; a cluster neither offered nor recorded is not the
// hand-off's.
func (s *Service) reconcileGitOps(ctx context.Context, key clusterKey) (time.Duration, error) {
	mc := s.byName[key.mc]
	if mc == nil {
		return 0, nil
	}
	rec, err := mc.Kube.GetSecret(ctx, key.ns, gitopsRecordName(key.stackID))
	if err != nil {
		return 0, err
	}
	spec, offered := s.gitops.takeOffer(key.stackID)
	if !offered {
		if rec == nil {
			return 0, nil
		}
		if spec, err = specOfRecord(rec, key.stackID); err != nil {
			return 0, err
		}
	}
	op := &operation{spec: spec, mc: mc, ns: key.ns}
	objs, err := mc.Cache.Objects(ctx, key.ns, key.stackID)
	if err != nil {
		return 0, err
	}
	switch {
	case objs.Cluster == nil && objs.Release.Exists:
		return 0, nil // being created: the Cluster's events bring it back
	case objs.Cluster == nil || objs.Cluster.DeletionTimestamp != nil:
		return 0, s.handOffGone(ctx, op, rec)
	case !helmvalues.ArgoCDRegister(spec.Template.Labels, s.gitops.cfg.RegisterByDefault):
		return 0, s.handOffAbsent(ctx, op, rec)
	case !capistatus.ControlPlaneInitialized(objs.Cluster):
		return 0, nil // its API is not up: the Cluster's events bring it back
	}
	return s.handOff(ctx, op, rec)
}

// handOff writes op's cluster's Argo CD Secret and then its record, unless
// the record says the same was written. The kubeconfig Secret not there
// (yet, or again after a CA rotation) is looked at again shortly.
func (s *Service) handOff(ctx context.Context, op *operation, rec *corev1.Secret) (time.Duration, error) {
	acc, err := op.mc.Kube.WorkloadAccess(ctx, op.ns, op.stackID())
	if err != nil || acc == nil {
		return gitopsRecheck, err
	}
	secret, err := argoCDSecret(op.spec, *acc, gitopsTarget{Namespace: s.gitops.cfg.Namespace, Project: s.gitops.cfg.Project})
	if err != nil {
		return 0, err
	}
	want, err := gitopsRecord(op, secretDigest(secret))
	if err != nil {
		return 0, err
	}
	if !recordSays(rec, want) {
		err := s.gitops.target(op).ApplySecret(ctx, secret)
		s.gitops.cfg.Observe("apply", err)
		if err != nil {
			return 0, err
		}
		if err := op.mc.Kube.ApplySecret(ctx, want); err != nil {
			return 0, fmt.Errorf("recording the Argo CD hand-off: %w", err)
		}
		s.log.InfoContext(ctx, "argo cd hand-off", "stack_id", op.stackID(), "action", "apply",
			"secret", s.gitops.cfg.Namespace+"/"+gitopsSecretName(op.stackID()))
	}
	s.gitops.recordedAs(op.spec)
	return gitopsRefresh, nil
}

// handOffGone deletes the Argo CD Secret of a cluster being deleted, unless
// its record says there is none or this process deleted it already (every
// event of the deletion comes here). The record is left to the cleanup
// after delete: writing it now could outlive that cleanup.
func (s *Service) handOffGone(ctx context.Context, op *operation, rec *corev1.Secret) error {
	if rec != nil && rec.Annotations[gitopsWrittenAnnotation] == gitopsAbsentDigest || s.gitops.unregistered(op.stackID()) {
		return nil
	}
	if err := s.unregisterLogged(ctx, op); err != nil {
		return err
	}
	s.gitops.markUnregistered(op.stackID())
	return nil
}

// handOffAbsent deletes the Argo CD Secret of a cluster whose template
// turned the hand-off off, and records it, unless its record says so.
func (s *Service) handOffAbsent(ctx context.Context, op *operation, rec *corev1.Secret) error {
	want, err := gitopsRecord(op, gitopsAbsentDigest)
	if err != nil {
		return err
	}
	if !recordSays(rec, want) {
		if err := s.unregisterLogged(ctx, op); err != nil {
			return err
		}
		if err := op.mc.Kube.ApplySecret(ctx, want); err != nil {
			return fmt.Errorf("recording the Argo CD hand-off: %w", err)
		}
	}
	s.gitops.recordedAs(op.spec)
	return nil
}

// unregisterLogged deletes the cluster's Argo CD Secret, counted and logged.
func (s *Service) unregisterLogged(ctx context.Context, op *operation) error {
	err := s.unregisterGitOps(ctx, op)
	s.gitops.cfg.Observe("delete", err)
	if err == nil {
		s.log.InfoContext(ctx, "argo cd hand-off", "stack_id", op.stackID(), "action", "delete",
			"secret", s.gitops.cfg.Namespace+"/"+gitopsSecretName(op.stackID()))
	}
	return err
}
