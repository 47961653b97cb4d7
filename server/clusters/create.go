package clusters

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/magnum-capi/magnum-capi/certs"
)

// Create names the release, then renders the values and checks the CA
// material and the API server's floating IP (floating_ip.go) before writing
// anything; under the cluster's Lease it finds or
// makes the Nova server groups (server_groups.go), writes the credential and
// CA Secrets and, beside them up to its first write, installs the chart. It
// returns the stack_id. A deadline that passes once the release is being
// written is not a failure: Helm finishes in the background, the cluster
// is being built, and the status path reports CREATE_IN_PROGRESS until it
// is (commit_gate.go); one that passes before leaves nothing of the release.
//
// Idempotent: the release is named from the cluster's uuid, so a create
// retried after a crash names the same release, finds the server groups by
// their names, keeps the credential its Secret holds, re-applies the CA
// Secrets and upgrades the release it finds.
func (s *Service) Create(ctx context.Context, caller Caller, spec Spec, cas certs.Authorities) (string, error) {
	spec.Cluster.StackID = stackID(spec)
	var caSecrets []*corev1.Secret
	op, err := s.prepare(ctx, caller, spec, func(op *operation) (err error) {
		if caSecrets, err = certs.Secrets(cas, op.owner()); err != nil {
			return err
		}
		return s.checkFloatingIP(ctx, op)
	})
	if err != nil {
		return "", err
	}
	err = s.withLock(ctx, op, func(ctx context.Context) error {
		// Server groups first: a project out of them (quota) fails the
		// create before the credential and Secrets are made. A fresh
		// placement does not read the release, so the release's history
		// read (deployRelease) runs beside the credential, not before it.
		if err := s.placeServerGroups(ctx, op, true); err != nil {
			return err
		}
		// The credential (Keystone, then its Secret) and the CA Secrets do
		// not depend on each other; the chart refers to both by name, so
		// they run beside the release's reads and rendering, and its first
		// write waits for them (release.Target.BeforeWrite): nothing of the
		// release is written if either fails.
		prep := goAll(ctx, s.logger(ctx), "clusters/createPrepare",
			func() error { return s.ensureCredential(ctx, caller, op) },
			func() error { return s.applyCASecrets(ctx, op, caSecrets) },
		)
		_, err := s.deployGated(ctx, op, true, prep.Wait)
		// Under the Lease to the end: nothing of the operation outlives it.
		if prepared := prep.Wait(); prepared != nil {
			return prepared // the cause, rather than the release it held back
		}
		return err
	})
	if err != nil {
		return "", err
	}
	s.log.InfoContext(ctx, "cluster created", "stack_id", spec.Cluster.StackID, "namespace", op.ns, "management_cluster", op.mc.Name, "chart_version", op.values.chartVersion)
	return spec.Cluster.StackID, nil
}
