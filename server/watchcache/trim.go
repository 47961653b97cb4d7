package watchcache

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// keptLabels and keptAnnotations are all that is kept of CAPI objects'
// labels and annotations: what status derivation reads (capistatus's
// lists, which include the label the cache indexes by) and what the
// operations read of the cached Cluster (server/clusters: the values mode
// of an adopted cluster, when a delete was requested). Every other key is
// dropped: a Cluster carries 7 labels and 3 annotations, a
// KubeadmControlPlane 9 and 3, and at thousands of clusters those maps
// were a fifth of the cache.
var (
	keptLabels      = keySet(append([]string{kube.ChartClusterLabel, clusterv1.ClusterNameLabel}, capistatus.LabelsRead...))
	keptAnnotations = keySet(append([]string{helmvalues.ValuesAnnotation, kube.DeleteRequestedAnnotation}, capistatus.AnnotationsRead...))
	// helmRecordLabels: what newestRevision reads of Helm's release Secrets,
	// and the labels they are selected and indexed by.
	helmRecordLabels = keySet([]string{helmOwnerLabel, "name", "status", "version", "createdAt"})
)

func keySet(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// only is m with the keys in keep: m itself when it has no other, nil when
// it has none of them.
func only(m map[string]string, keep map[string]bool) map[string]string {
	n := 0
	for k := range m {
		if keep[k] {
			n++
		}
	}
	switch n {
	case len(m):
		return m
	case 0:
		return nil
	}
	out := make(map[string]string, n)
	for k, v := range m {
		if keep[k] {
			out[k] = v
		}
	}
	return out
}

// trimForStatus drops, after next, the parts of cached CAPI objects that
// status derivation never reads and that make up much of their size: the
// KubeadmControlPlane's kubeadm configuration (files, commands, component
// arguments), the selectors and the labels and annotations CAPI gives the
// machines of a KubeadmControlPlane or MachineDeployment (the machines
// themselves are cached), a MachineDeployment's and a Machine's bootstrap
// reference, a Machine's node system information and readiness gates,
// every object's owner references, the UID of every object but an addon
// (nothing else is looked up by UID), the labels and annotations nobody reads
// (keptLabels, keptAnnotations) and the conditions that change no status
// answer (dropSilentConditions). CAPO's and the addon provider's kinds
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
		case *clusterv1.Cluster:
			trimCAPIMeta(o)
		case *controlplanev1.KubeadmControlPlane:
			o.Spec.KubeadmConfigSpec = bootstrapv1.KubeadmConfigSpec{}
			o.Spec.MachineTemplate.ObjectMeta = clusterv1.ObjectMeta{}
			o.Status.Selector = ""
			trimCAPIMeta(o)
		case *clusterv1.MachineDeployment:
			o.Spec.Selector = metav1.LabelSelector{}
			o.Spec.Template.ObjectMeta = clusterv1.ObjectMeta{}
			o.Spec.Template.Spec.Bootstrap = clusterv1.Bootstrap{}
			o.Status.Selector = ""
			trimCAPIMeta(o)
		case *clusterv1.Machine:
			o.Status.NodeInfo = nil
			o.Spec.ReadinessGates = nil
			o.Spec.Bootstrap = clusterv1.Bootstrap{}
			trimCAPIMeta(o)
		case *metav1.PartialObjectMetadata:
			o.Labels = only(o.Labels, helmRecordLabels)
			o.Annotations = nil
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
			switch out.(type) {
			case *HelmRelease, *Manifests:
				// An addon's UID keys since when it has failed.
			default:
				o.SetUID("")
			}
		}
		dropSilentConditions(out)
		intern.object(out)
		return out, nil
	}
}

// trimCAPIMeta keeps only the labels and annotations someone reads.
func trimCAPIMeta(o metav1.Object) {
	o.SetLabels(only(o.GetLabels(), keptLabels))
	o.SetAnnotations(only(o.GetAnnotations(), keptAnnotations))
}

// dropSilentConditions removes the conditions of CAPI's kinds that change
// no status answer (capistatus.ConditionMatters): healthy clusters'
// objects carry a dozen or more conditions each, True and without a
// message, of which status asks for a few.
func dropSilentConditions(obj any) {
	current, v1beta1 := conditionsOf(obj)
	if current != nil {
		*current = slices.DeleteFunc(*current, func(c metav1.Condition) bool {
			return !capistatus.ConditionMatters(c.Type, string(c.Status), "", c.Message)
		})
	}
	if v1beta1 != nil {
		*v1beta1 = slices.DeleteFunc(*v1beta1, func(c clusterv1.Condition) bool {
			return !capistatus.ConditionMatters(string(c.Type), string(c.Status), string(c.Severity), c.Message)
		})
	}
}
