package capisim

import (
	"context"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// A deleted <cluster>-kubeconfig Secret is made again, as KCP's
// reconcileKubeconfig does for a missing one (after a CA rotation, the
// driver deletes it so the new one is signed by the new CA). The simulator
// watches Secrets' metadata only, and only their deletion, so it still
// caches no Secret contents.

// kubeconfigDeleted passes deletions of Secrets named like a kubeconfig.
var kubeconfigDeleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc: func(e event.DeleteEvent) bool {
		return strings.HasSuffix(e.Object.GetName(), "-kubeconfig")
	},
}

// kubeconfigToControlPlane forgets that the owning control plane's
// kubeconfig exists and wakes it, so its next reconcile writes a new one.
func (s *Simulator) kubeconfigToControlPlane(_ context.Context, o client.Object) []ctrl.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == gvkKCP.Kind && ref.Controller != nil && *ref.Controller {
			s.kubeconfigDone.Delete(ref.UID)
			return requestFor(o.GetNamespace(), ref.Name)
		}
	}
	return nil
}
