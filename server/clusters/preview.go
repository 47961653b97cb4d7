package clusters

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// Preview is a dry run of an update: the values, and what would change.
type Preview struct {
	ValuesYAML   string
	Diff         string
	Deployed     bool
	ChartVersion string
	Warnings     []string
}

// Preview renders the values the cluster would get now and compares them
// with the deployed release (an upgrade preview for operators). It writes
// nothing.
func (s *Service) Preview(ctx context.Context, caller Caller, spec Spec) (Preview, error) {
	r, err := s.render(ctx, caller.identity(), spec)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{ChartVersion: r.chartVersion, Warnings: r.warnings}
	var deployed *release.Release
	if spec.Cluster.StackID != "" {
		op, err := s.at(ctx, spec)
		if err != nil {
			return Preview{}, err
		}
		prev, err := s.releases.Get(ctx, op.target(), spec.Cluster.StackID)
		var notFound *release.NotFoundError
		switch {
		case err == nil:
			carryMachineMetadata(prev.Values, r.values, caRotationKey)
			// The groups the machines are in stay (a new node group's
			// is made only when the change is applied).
			helmvalues.WithServerGroups(r.values, planServerGroups(spec.Cluster.StackID, r.values, prev.Values, false).ids)
			if err := s.previewAdoption(prev, &r, &p); err != nil {
				return Preview{}, err
			}
			deployed = prev
		case !errors.As(err, &notFound):
			return Preview{}, err
		}
	}
	out, err := yaml.Marshal(r.values)
	if err != nil {
		return Preview{}, fmt.Errorf("encoding values: %w", err)
	}
	p.ValuesYAML = string(out)
	if deployed != nil {
		p.Deployed = true
		var b strings.Builder
		if deployed.ChartVersion != r.chartVersion {
			fmt.Fprintf(&b, "~ chart version: %s -> %s\n", deployed.ChartVersion, r.chartVersion)
		}
		for _, c := range helmvalues.DiffValues(deployed.Values, r.values) {
			b.WriteString(c.String())
			b.WriteByte('\n')
		}
		p.Diff = b.String()
	}
	return p, nil
}
