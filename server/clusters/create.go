package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/certs"
)

func ownerOf(ns string, spec Spec) certs.Owner {
	return certs.Owner{
		Namespace: ns, StackID: spec.Cluster.StackID, ClusterUUID: spec.Cluster.UUID,
		ProjectID: spec.Cluster.ProjectID, UserID: spec.Cluster.UserID,
	}
}

// Create names the release, then renders the values and checks the CA
// material before writing anything; under the cluster's Lease it writes the
// credential and CA Secrets and installs the chart. It returns the stack_id.
// Retried after a crash, it names the same release and converges.
func (s *Service) Create(ctx context.Context, caller Caller, spec Spec, cas certs.Authorities) (string, error) {
	id, err := stackID(spec)
	if err != nil {
		return "", err
	}
	spec.Cluster.StackID = id
	mc, err := s.place(ctx, spec)
	if err != nil {
		return "", err
	}
	ns := s.namespace(spec)
	r, err := s.render(ctx, caller, spec)
	if err != nil {
		return "", err
	}
	owner := ownerOf(ns, spec)
	caSecrets, err := certs.Secrets(cas, owner)
	if err != nil {
		return "", err
	}
	ch, err := s.charts.Load(ctx, r.chartVersion)
	if err != nil {
		return "", err
	}
	err = s.withLock(ctx, mc, ns, spec, func(ctx context.Context) error {
		if err := s.ensureCredential(ctx, caller, mc, ns, spec, owner); err != nil {
			return err
		}
		for _, secret := range caSecrets {
			if err := mc.Kube.ApplySecret(ctx, secret); err != nil {
				return err
			}
		}
		return s.applyRelease(ctx, mc, ns, spec, ch, r.values, true)
	})
	if err != nil {
		return "", err
	}
	s.log.InfoContext(ctx, "cluster created", "stack_id", id, "namespace", ns, "management_cluster", mc.Name, "chart_version", r.chartVersion)
	return id, nil
}
