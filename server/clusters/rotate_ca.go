package clusters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"

	"github.com/magnum-capi/magnum-capi/certs"
)

// caRotationKey is the machine metadata key that carries the fingerprint of
// the certificate material the machines were built to trust. Changing it
// changes the chart's machine templates (their names hash their spec), so
// Cluster API replaces every control plane and worker machine: the new ones
// are bootstrapped from the new CA Secrets and trust only the new CA.
//
// Why a values marker rather than, say, KubeadmControlPlane's
// spec.rollout.after patched beside Helm: the marker lives in the release,
// so every sidecar replica and every restart sees it; it is derived from
// the material, so a retried rotation rolls nothing twice; and it goes
// through the chart like every other change, with nothing for Helm's
// three-way merge to fight over. The cost is a harmless Nova metadata item
// on each server, and carrying the marker forward on later upgrades.
const caRotationKey = "magnum-ca-fingerprint"

// RotateCACertificate writes Magnum's new CA material and rolls every node.
// The conductor has generated and stored the new certificates already; the
// old kubeconfig Secret (signed by the old CA) is removed so Cluster API
// issues a new one from the new CA, as KubeadmControlPlane does for a
// missing kubeconfig.
//
// Magnum and the management cluster must end on the same CA, whatever
// fails (the shim keeps or deletes the new certificates by the answer):
// everything that can fail without writing (the release read, the server
// groups, the chart) runs first; the CA Secrets and the kubeconfig change at
// the release's first write (commit_gate.go). A failure or deadline before
// Helm has written the release record (with the new marker) puts the
// Secrets back as they were and has the kubeconfig issued again
// (rotate_ca_rollback.go), and the answer says nothing changed; one after
// it is an AppliedError (Magnum keeps the new CA, and the next update rolls
// the machines, carrying the marker from the release); a deadline during
// Helm's writes is success, Helm finishing in the background and the status
// path following the roll.
//
// Idempotent: the marker is the material's fingerprint, so a retried
// rotation applies the same Secrets and values and rolls nothing twice.
func (s *Service) RotateCACertificate(ctx context.Context, caller Caller, spec Spec, cas certs.Authorities) error {
	var caSecrets []*corev1.Secret
	op, err := s.prepare(ctx, caller, spec, func(op *operation) (err error) {
		caSecrets, err = certs.Secrets(cas, op.owner())
		return err
	})
	if err != nil {
		return err
	}
	setMachineMetadata(op.values.values, caRotationKey, fingerprint(cas))
	return s.withLock(ctx, op, func(ctx context.Context) error {
		before, err := s.readCASecrets(ctx, op, caSecrets)
		if err != nil {
			return err
		}
		// New machines join the groups the old ones were in.
		if err := s.placeServerGroups(ctx, op, false); err != nil {
			return err
		}
		out, err := s.deployGated(ctx, op, false, func() error { return s.switchCA(ctx, op, caSecrets) })
		switch {
		case err == nil:
			return nil
		case out.wrote:
			// The release has the new marker: the next update rolls
			// the machines onto the new CA if this one did not.
			return &AppliedError{Change: "the new CA", Err: err}
		case out.prepared:
			return s.rollBackCA(ctx, op, before, caSecrets, out.committed, err)
		}
		return err
	})
}

// switchCA is the rotation's point of no return, run at the release's first
// write: the new CA Secrets, then the kubeconfig signed by the old CA goes
// (Cluster API issues one from the new CA Secret).
func (s *Service) switchCA(ctx context.Context, op *operation, caSecrets []*corev1.Secret) error {
	if err := s.applyCASecrets(ctx, op, caSecrets); err != nil {
		return err
	}
	if err := op.mc.Kube.DeleteSecret(ctx, op.ns, op.stackID()+"-kubeconfig"); err != nil {
		return err
	}
	// The Argo CD Secret still holds the old credential: the hand-off
	// writes the one Cluster API issues now, once it is there.
	if s.gitops != nil {
		s.gitops.queue.Add(clusterKey{op.mc.Name, op.ns, op.stackID()})
	}
	return nil
}

// applyCASecrets writes the cluster's CA Secrets, all at once (server-side
// apply: a retry converges). The caller holds the cluster's Lease.
func (s *Service) applyCASecrets(ctx context.Context, op *operation, secrets []*corev1.Secret) error {
	applies := make([]func() error, len(secrets))
	for i, secret := range secrets {
		applies[i] = func() error { return op.mc.Kube.ApplySecret(ctx, secret) }
	}
	return allOf(ctx, s.logger(ctx), applies...)
}

// fingerprint identifies all the material nodes are built from: the three
// CAs and the service-account key. Any of them changing must roll every
// machine; the same material gives the same fingerprint.
func fingerprint(cas certs.Authorities) string {
	h := sha256.New()
	for _, pem := range [][]byte{cas.CA.Certificate, cas.EtcdCA.Certificate, cas.FrontProxyCA.Certificate, cas.ServiceAccount.Certificate} {
		h.Write(pem)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// setMachineMetadata sets one Nova metadata key on the control plane and
// every node group (through nodeGroupDefaults, which the chart merges into
// each group).
func setMachineMetadata(values map[string]any, key, value string) {
	for _, section := range []string{"controlPlane", "nodeGroupDefaults"} {
		sec, _ := values[section].(map[string]any)
		if sec == nil {
			sec = map[string]any{}
			values[section] = sec
		}
		md, _ := sec["machineMetadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			sec["machineMetadata"] = md
		}
		md[key] = value
	}
}

// carryMachineMetadata copies a rotation marker from the deployed values into
// newly rendered ones, so a later resize or upgrade does not drop it and roll
// every machine again.
func carryMachineMetadata(deployed, values map[string]any, key string) {
	for _, section := range []string{"controlPlane", "nodeGroupDefaults"} {
		sec, _ := deployed[section].(map[string]any)
		md, _ := sec["machineMetadata"].(map[string]any)
		if v, ok := md[key].(string); ok && v != "" {
			setMachineMetadata(values, key, v)
			return
		}
	}
}
