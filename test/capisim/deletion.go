package capisim

import (
	"context"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// reconcileDelete deletes a Cluster in CAPI's order: its workers
// (MachineDeployments and what they own), then the control plane, then the
// infrastructure cluster, each waited for; then what the garbage collector
// would remove, then the finalizer.
func (r *clusterReconciler) reconcileDelete(ctx context.Context, s *clusterScope) (ctrl.Result, error) {
	c := s.cluster
	var pending []string
	var mdNames []string
	for _, md := range s.mds {
		if ownedBy(md, c.UID) {
			if err := r.deleteIfPresent(ctx, md); err != nil {
				return ctrl.Result{}, err
			}
		}
		mdNames = append(mdNames, md.Name)
	}
	if len(mdNames) > 0 {
		pending = append(pending, "* MachineDeployments: "+strings.Join(mdNames, ", "))
	}
	var msNames []string
	for _, ms := range s.machineSets {
		msNames = append(msNames, ms.Name)
	}
	if len(msNames) > 0 {
		pending = append(pending, "* MachineSets: "+strings.Join(msNames, ", "))
	}
	var workerNames []string
	for _, m := range s.workerMachines {
		if ownedBy(m, c.UID) {
			if err := r.deleteIfPresent(ctx, m); err != nil {
				return ctrl.Result{}, err
			}
		}
		workerNames = append(workerNames, m.Name)
	}
	if len(workerNames) > 0 {
		pending = append(pending, "* Machines: "+strings.Join(workerNames, ", "))
	}
	if len(pending) > 0 {
		s.deletingReason = clusterv1.ClusterDeletingWaitingForWorkersDeletionReason
		s.deletingMessage = strings.Join(pending, "\n")
		return after(r.opts.Step), nil
	}

	if s.kcp != nil {
		if err := r.deleteIfPresent(ctx, s.kcp); err != nil {
			return ctrl.Result{}, err
		}
		s.deletingReason = clusterv1.ClusterDeletingWaitingForControlPlaneDeletionReason
		s.deletingMessage = fmt.Sprintf("Waiting for %s to be deleted", c.Spec.ControlPlaneRef.Kind)
		return after(r.opts.Step), nil
	}
	if s.infra != nil {
		if err := r.deleteIfPresent(ctx, s.infra); err != nil {
			return ctrl.Result{}, err
		}
		s.deletingReason = clusterv1.ClusterDeletingWaitingForInfrastructureDeletionReason
		s.deletingMessage = fmt.Sprintf("Waiting for %s to be deleted", c.Spec.InfrastructureRef.Kind)
		return after(r.opts.Step), nil
	}

	s.deletingReason = clusterv1.ClusterDeletingDeletionCompletedReason
	s.deletingMessage = "Deletion completed"
	if err := r.collectGarbage(ctx, c, c.Name); err != nil {
		return ctrl.Result{}, err
	}
	r.pace.forget(c.UID)
	return ctrl.Result{}, r.removeFinalizer(ctx, c, clusterv1.ClusterFinalizer)
}
