package clusters

import (
	"context"
	"errors"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// target is where the cluster's release lives, with the labels every
// object of it carries and, once op's values are rendered, the annotations
// its MachineDeployments carry (scale from zero): every install and upgrade
// renders them again, so they survive every later upgrade.
func (op *operation) target() release.Target {
	return release.Target{Getter: op.mc.Kube.HelmGetter(op.ns), Namespace: op.ns, Labels: clusterLabels(op.spec),
		MachineAnnotations: op.values.machineAnnotations, SpecPatches: op.values.specPatches, History: op.history, BeforeWrite: op.beforeWrite, Wrote: op.wrote}
}

// deployedRelease is the cluster's deployed release, nil when there is
// none, read once per operation: the caller holds the cluster's Lease, so
// nothing else changes it meanwhile.
func (s *Service) deployedRelease(ctx context.Context, op *operation) (*release.Release, error) {
	if op.read {
		return op.deployed, nil
	}
	prev, err := s.releases.Get(ctx, op.target(), op.stackID())
	var notFound *release.NotFoundError
	switch {
	case errors.As(err, &notFound):
		prev = nil
	case err != nil:
		return nil, err
	}
	op.deployed, op.read = prev, true
	return prev, nil
}

// deployRelease installs or upgrades the cluster's release with values and
// op's chart. With carry, a CA-rotation marker in the deployed values is
// kept, so this change does not roll every machine again, and a release
// another driver installed is adopted (adoption.go). The caller holds the
// cluster's Lease.
func (s *Service) deployRelease(ctx context.Context, op *operation, values map[string]any, carry bool) error {
	// One read of the deployed release serves the server groups, the CA
	// marker, the certificate renewal default and adoption.
	deployed, err := s.deployedRelease(ctx, op)
	if err != nil {
		return err
	}
	t := op.target()
	certificateRenewal(&t, op.values, deployed)
	var prev *release.Release
	if carry && deployed != nil {
		prev = deployed
		carryMachineMetadata(prev.Values, values, caRotationKey)
		helmvalues.KeepDeployedContainerdVolumes(prev.Values, values)
	}
	if err := s.etcdEncryption(ctx, op, values); err != nil {
		return err
	}
	values, err = s.adoptValues(ctx, t, op.stackID(), prev, op.chart, values, carry)
	if err != nil {
		return err
	}
	rel, err := s.deployToTheEnd(ctx, op, t, values)
	if err != nil {
		return err
	}
	s.rememberDeployed(op.stackID(), rel.Revision)
	return nil
}
