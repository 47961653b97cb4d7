package kube

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
)

// trimForStatus drops, after next, the parts of cached objects that status
// derivation never reads and that make up most of their size: the
// KubeadmControlPlane's kubeadm configuration (files, commands, component
// arguments) and an addon's spec (chart values, manifest sources) and
// status resource lists. Status reads the control plane's version and
// replicas, and an addon's cluster, phase and failure message; the live
// reader (`magnum-capi status --cluster`) reads whole objects and must
// derive the same answer, which the end-to-end suite checks.
func trimForStatus(next toolscache.TransformFunc) toolscache.TransformFunc {
	return func(in any) (any, error) {
		out, err := next(in)
		if err != nil {
			return out, err
		}
		switch o := out.(type) {
		case *controlplanev1.KubeadmControlPlane:
			o.Spec.KubeadmConfigSpec = bootstrapv1.KubeadmConfigSpec{}
		case *unstructured.Unstructured:
			if isAddon(o.GroupVersionKind()) {
				trimAddon(o)
			}
		}
		return out, nil
	}
}

// trimAddon keeps of an addon's spec and status only what capistatus reads.
func trimAddon(o *unstructured.Unstructured) {
	keep := func(field string, names ...string) {
		old, ok := o.Object[field].(map[string]any)
		if !ok {
			return
		}
		kept := map[string]any{}
		for _, n := range names {
			if v, ok := old[n]; ok {
				kept[n] = v
			}
		}
		o.Object[field] = kept
	}
	keep("spec", "clusterName")
	keep("status", "phase", "failureMessage")
}
