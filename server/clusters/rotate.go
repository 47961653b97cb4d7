package clusters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

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
// missing kubeconfig. Retried, it converges to the same state.
func (s *Service) RotateCACertificate(ctx context.Context, caller Caller, spec Spec, cas certs.Authorities) error {
	if spec.Cluster.StackID == "" {
		return preconditionf("cluster %s has no stack_id: it was never created by this driver", spec.Cluster.UUID)
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return err
	}
	ns := s.namespace(spec)
	caSecrets, err := certs.Secrets(cas, ownerOf(ns, spec))
	if err != nil {
		return err
	}
	r, err := s.render(ctx, caller, spec)
	if err != nil {
		return err
	}
	setMachineMetadata(r.values, caRotationKey, fingerprint(cas))
	ch, err := s.charts.Load(ctx, r.chartVersion)
	if err != nil {
		return err
	}
	return s.withLock(ctx, mc, ns, spec, func(ctx context.Context) error {
		for _, secret := range caSecrets {
			if err := mc.Kube.ApplySecret(ctx, secret); err != nil {
				return err
			}
		}
		if err := mc.Kube.DeleteSecret(ctx, ns, spec.Cluster.StackID+"-kubeconfig"); err != nil {
			return err
		}
		return s.applyRelease(ctx, mc, ns, spec, ch, r.values, false)
	})
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
