package watchcache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// trimForStatus drops, after next, the parts of cached CAPI objects that
// status derivation never reads and that make up much of their size: the
// KubeadmControlPlane's kubeadm configuration (files, commands, component
// arguments), a Machine's node system information and readiness gates, and
// every object's owner references. CAPO's and the addon provider's kinds
// are decoded into partial types (partial.go); of their metadata,
// which capistatus does not read beyond names, times and finalizers, only
// the label the cache indexes them by is kept (the chart's cluster label;
// CAPI's on CAPO's OpenStackServers). The strings left
// are shared with other clusters' through intern. The live reader
// (`magnum-capi status --cluster`) reads whole objects and must derive the
// same answer, which the end-to-end suite checks.
func trimForStatus(next toolscache.TransformFunc, intern *interner) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out, err := next(in)
		if err != nil {
			return out, err
		}
		switch o := out.(type) {
		case *controlplanev1.KubeadmControlPlane:
			o.Spec.KubeadmConfigSpec = bootstrapv1.KubeadmConfigSpec{}
		case *clusterv1.Machine:
			o.Status.NodeInfo = nil
			o.Spec.ReadinessGates = nil
		case *OpenStackCluster, *HelmRelease, *Manifests:
			m := o.(metav1.Object)
			m.SetLabels(map[string]string{kube.ChartClusterLabel: m.GetLabels()[kube.ChartClusterLabel]})
			m.SetAnnotations(nil)
		case *OpenStackServer:
			o.SetLabels(map[string]string{clusterv1.ClusterNameLabel: o.GetLabels()[clusterv1.ClusterNameLabel]})
			o.SetAnnotations(nil)
		}
		if o, ok := out.(metav1.Object); ok {
			o.SetOwnerReferences(nil)
		}
		intern.object(out)
		return out, nil
	}
}
