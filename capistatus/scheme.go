package capistatus

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	controlplanev1beta1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// conversionScheme knows CAPI's v1beta1 and v1beta2 kinds together with the
// generated conversions between them, which the api module registers without
// controller-runtime. The management cluster stores v1beta2 and the sidecar
// reads v1beta2; v1beta1 input only comes from files an operator fetched by an
// explicit version (kubectl get clusters.v1beta1.cluster.x-k8s.io).
var conversionScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1beta1.AddToScheme, clusterv1.AddToScheme,
		controlplanev1beta1.AddToScheme, controlplanev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			// Registration of compiled-in types only fails on a programming
			// error; an empty scheme then makes every v1beta1 object an error
			// instead of a crash.
			return runtime.NewScheme()
		}
	}
	return s
})
