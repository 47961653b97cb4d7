package clusters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/magnum-capi/magnum-capi/certs"
)

// caRotationKey is the machine metadata key that carries the fingerprint of
// the CA the machines were built to trust. Changing it changes the chart's
// machine templates, so Cluster API replaces every control plane and worker
// machine: the new ones trust only the new CA.
const caRotationKey = "magnum-ca-fingerprint"

// RotateCACertificate writes Magnum's new CA material and rolls every node.
// The conductor has generated and stored the new certificates already; the
// old kubeconfig Secret (signed by the old CA) is removed so Cluster API
// issues a new one.
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
	sum := sha256.Sum256(cas.CA.Certificate)
	setMachineMetadata(r.values, caRotationKey, hex.EncodeToString(sum[:8]))
	ch, err := s.charts.Load(ctx, r.chartVersion)
	if err != nil {
		return err
	}
	return s.withLock(ctx, mc, ns, spec.Cluster.StackID, func(ctx context.Context) error {
		for _, secret := range caSecrets {
			if err := mc.Kube.ApplySecret(ctx, secret); err != nil {
				return err
			}
		}
		if err := mc.Kube.DeleteSecret(ctx, ns, spec.Cluster.StackID+"-kubeconfig"); err != nil {
			return err
		}
		return s.applyRelease(ctx, mc, ns, spec.Cluster.StackID, ch, r.values, false)
	})
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
	sec, _ := deployed["controlPlane"].(map[string]any)
	md, _ := sec["machineMetadata"].(map[string]any)
	if v, ok := md[key].(string); ok && v != "" {
		setMachineMetadata(values, key, v)
	}
}

// RotateCredential replaces the cluster's application credential: a new one
// is made as the caller, the Secret is rewritten (CAPO and the cloud
// provider pick it up), then the old one is deleted.
func (s *Service) RotateCredential(ctx context.Context, caller Caller, spec Spec) error {
	if spec.Cluster.StackID == "" {
		return preconditionf("cluster %s has no stack_id: it was never created by this driver", spec.Cluster.UUID)
	}
	mc, err := s.place(ctx, spec)
	if err != nil {
		return err
	}
	ns := s.namespace(spec)
	return s.withLock(ctx, mc, ns, spec.Cluster.StackID, func(ctx context.Context) error {
		oldID, err := s.credentialID(ctx, mc, ns, spec.Cluster.StackID)
		if err != nil {
			return err
		}
		cred, err := s.openstack.CreateCredential(ctx, caller, spec.Cluster)
		if err != nil {
			return err
		}
		if err := mc.Kube.ApplySecret(ctx, credentialSecret(ns, spec.Cluster.StackID, ownerOf(ns, spec), cred)); err != nil {
			if derr := s.openstack.DeleteCredential(context.WithoutCancel(ctx), spec.Cluster, cred.ID); derr != nil {
				s.log.ErrorContext(ctx, "application credential left behind", "credential", cred.ID, "err", derr)
			}
			return err
		}
		if oldID != "" && oldID != cred.ID {
			if err := s.openstack.DeleteCredential(ctx, spec.Cluster, oldID); err != nil {
				return fmt.Errorf("the new application credential %s is in use, but deleting the old one (%s) failed: %w", cred.ID, oldID, err)
			}
		}
		s.log.InfoContext(ctx, "application credential rotated", "stack_id", spec.Cluster.StackID, "old", oldID, "new", cred.ID)
		return nil
	})
}
