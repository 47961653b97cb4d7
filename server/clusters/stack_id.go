package clusters

import "github.com/magnum-capi/magnum-capi/helmvalues"

// stackID is the cluster's stored stack_id, or for a new cluster the release
// name helmvalues.ReleaseName derives from its name and uuid: a create
// retried after a crash, before Magnum stored stack_id, thus names the same
// release and finds what the first attempt made instead of leaking it.
func stackID(spec Spec) string {
	if spec.Cluster.StackID != "" {
		return spec.Cluster.StackID
	}
	return helmvalues.ReleaseName(spec.Cluster.Name, spec.Cluster.UUID)
}
