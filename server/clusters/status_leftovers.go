package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/certs"
)

// withLeftovers checks a deletion the watch cache shows complete against
// the API server: the chart keeps its machine templates past the uninstall
// and Cluster API's Secrets outlive the Cluster, until Kubernetes' garbage
// collector deletes them. DELETE_COMPLETE makes Magnum forget the cluster,
// so it waits for them too (within the delete timeout, naming them). The
// driver's own Secrets are not waited for here: the cleanup reconciler
// deletes them next, and the status waits for its marker (cleanup_marker.go).
// Only a deletion that looks complete costs these requests.
func (s *Service) withLeftovers(ctx context.Context, o observation, req capistatus.Request, res capistatus.Result) capistatus.Result {
	left, err := o.op.mc.Kube.Leftovers(ctx, o.op.ns, o.op.stackID(), certs.ClusterUUIDLabel)
	if err != nil {
		return deleteCleanupResult(res, err)
	}
	if len(left) == 0 {
		return res
	}
	snap := o.snap
	for _, l := range left {
		snap.Leftovers = append(snap.Leftovers, capistatus.Leftover{Kind: l.Kind, Name: l.Name})
	}
	return capistatus.Derive(req, snap, s.cfg.Status)
}
