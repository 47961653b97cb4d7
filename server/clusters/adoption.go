package clusters

import (
	"context"
	"sync"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/release"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// Adoption of releases another driver (the StackHPC magnum-capi-helm driver)
// installed: same chart, same names, so this driver takes them over in
// place. helmvalues.Adopt decides what is applied; docs/migration.md is the
// operator's side.

// adoptValues decides the values deployRelease installs. A fresh install and a
// CA rotation (carry false: it replaces every machine on purpose) get the
// rendered values with the managed marker. Otherwise the deployed release
// decides (helmvalues.Adopt): a release with this driver's values gets the
// rendered ones; another driver's or an adopted release keeps its values and
// gets Magnum's counts, unless the Kubernetes version, image or chart changes.
// prev is the deployed release, nil when there is none. The caller holds
// the cluster's Lease.
func (s *Service) adoptValues(ctx context.Context, t release.Target, stackID string, prev *release.Release, ch *chart.Chart, values map[string]any, carry bool) (map[string]any, error) {
	if !carry || prev == nil {
		return helmvalues.MarkManaged(values), nil
	}
	a, err := helmvalues.Adopt(helmvalues.AdoptInput{
		Deployed: prev.Values, DeployedChart: prev.ChartVersion,
		Rendered: values, RenderedChart: ch.Metadata.Version,
	})
	if err != nil {
		return nil, err
	}
	if len(a.Notes) > 0 {
		s.log.InfoContext(ctx, "applying to a release another driver installed", "stack_id", stackID,
			"namespace", t.Namespace, "values", a.Mode, "deployed_chart", prev.ChartVersion, "notes", a.Notes)
	}
	return a.Values, nil
}

// previewAdoption makes a preview show what a mutation would apply to the
// deployed release (adoptValues' decision), not the full rendering.
func (s *Service) previewAdoption(prev *release.Release, r *rendered, p *Preview) error {
	a, err := helmvalues.Adopt(helmvalues.AdoptInput{
		Deployed: prev.Values, DeployedChart: prev.ChartVersion,
		Rendered: r.values, RenderedChart: r.chartVersion,
	})
	if err != nil {
		return err
	}
	r.values, r.chartVersion = a.Values, a.ChartVersion
	p.ChartVersion = a.ChartVersion
	p.Warnings = append(p.Warnings, a.Notes...)
	return nil
}

// adoptionNotices remembers, per Service, cluster and marker, that the
// recognition below was logged, so a cluster is announced once per sidecar
// process and again only when its state changes. Package level because the
// Service's fields belong to service.go; the entries are a few bytes per
// cluster.
var adoptionNotices sync.Map // adoptionNotice -> struct{}

type adoptionNotice struct {
	svc     *Service
	stackID string
	mode    string
}

// noticeAdoption is how a status or health poll recognises a cluster whose
// release another driver installed: its Cluster lacks this driver's marker.
// The status itself needs nothing else (the watch cache reads any Helm
// client's release and the chart's objects), and users see nothing: the
// switch of driver is the operator's, so the operator gets the log line.
// The next resize, node group change or upgrade adopts the release.
func (s *Service) noticeAdoption(ctx context.Context, spec Spec, objs *watchcache.Objects) {
	if objs == nil || objs.Cluster == nil || !objs.Release.Exists {
		return
	}
	mode := helmvalues.ValuesMode(objs.Cluster.GetAnnotations())
	if mode == helmvalues.ValuesManaged {
		return
	}
	if _, seen := adoptionNotices.LoadOrStore(adoptionNotice{s, spec.Cluster.StackID, mode}, struct{}{}); seen {
		return
	}
	if mode == helmvalues.ValuesAdopted {
		s.log.InfoContext(ctx, "cluster adopted from another driver: its release keeps that driver's values until an upgrade",
			"stack_id", spec.Cluster.StackID, "cluster", spec.Cluster.UUID, "values", mode)
		return
	}
	s.log.InfoContext(ctx, "cluster's release was installed by another driver: reading its status; its next resize, node group change or upgrade adopts it in place (see docs/migration.md)",
		"stack_id", spec.Cluster.StackID, "cluster", spec.Cluster.UUID, "release_revision", objs.Release.Revision)
}
