package capistatus

import "strings"

// deriveNodeGroup moves one node group along with the cluster's operation.
//
//   - DELETE_*: once the group's MachineDeployment (or KubeadmControlPlane) and
//     machines are gone it is DELETE_COMPLETE, and a non-default group is
//     destroyed (Magnum no longer does it; default groups go with the cluster).
//   - CREATE_/UPDATE_/ROLLBACK_IN_PROGRESS: COMPLETE when its rollout is
//     complete (the cluster's rules), FAILED when the cluster's operation
//     failed first, else IN_PROGRESS naming what it waits for.
//   - anything else is left as it is: a FAILED group stays failed (its failure
//     may come from the conductor, e.g. a rejected resize, which a converged
//     MachineDeployment would otherwise hide), and a COMPLETE group does not go
//     back to IN_PROGRESS when the autoscaler scales it.
//
// node_count and node_addresses are refreshed in every state.
func deriveNodeGroup(v groupView, snap Snapshot, cluster outcome) NodeGroupResult {
	ng := v.ng
	res := NodeGroupResult{UUID: ng.UUID, Name: ng.Name, Status: ng.Status, StatusReason: ng.StatusReason,
		NodeCount: ng.NodeCount, NodeAddresses: nodeAddresses(v.machines)}
	switch {
	case operation(ng.Status) == "DELETE":
		rem := v.remaining(snap)
		switch {
		case len(rem) == 0:
			res.Status, res.StatusReason, res.Destroy = DeleteComplete, "", !ng.IsDefault
		case ng.Status != DeleteInProgress:
		case cluster.failed:
			res.Status, res.StatusReason = DeleteFailed, groupFailure(cluster, forDeletion, rem)
		default:
			res.StatusReason = waitingFor(forDeletion, facetItems(rem))
		}
		return res
	case inProgress(ng.Status):
		facets := v.progressFacets(snap)
		switch {
		case len(facets) == 0:
			res.Status, res.StatusReason = completed(ng.Status), ""
		case cluster.failed:
			res.Status, res.StatusReason = failed(ng.Status), groupFailure(cluster, "", facets)
		default:
			items := appendProblems(nil, machineProblems(v.machines, snap.Servers))
			res.StatusReason = waitingFor("", append(items, facetItems(facets)...))
		}
	}
	res.NodeCount = nodeCount(v, snap, res.Status)
	return res
}

// groupFailure: on a timeout the group names what it was still waiting for;
// otherwise it carries the cluster's failure.
func groupFailure(cluster outcome, what string, facets []string) string {
	if cluster.timedOut {
		return timedOut(cluster.timeout, what, facetItems(facets))
	}
	return cluster.reason
}

// facetItems makes a group's facets one item, as in the cluster's reason.
func facetItems(facets []string) []item {
	return []item{{rankWorkers, strings.Join(facets, ", ")}}
}

// nodeCount is the replica count CAPI holds the group at (spec.replicas, which
// the cluster autoscaler moves) once the group is settled (not in progress,
// not failed) and its controller has observed the latest spec; otherwise
// Magnum's own count stands.
//
// It is deliberately not status.replicas, the number of machines existing
// right now: Magnum renders node_count back into the chart's machineCount on
// the next Helm upgrade, so a transient count (a surge machine during a
// rolling update, a machine being remediated) would permanently resize the
// group, could give the control plane an even size, and could fall below the
// autoscaler's minimum and make the next values render fail validation. The
// number of machines shows in status_reason while it differs.
func nodeCount(v groupView, snap Snapshot, status string) int {
	if inProgress(status) || strings.HasSuffix(status, "_FAILED") || operation(status) == "DELETE" {
		return v.ng.NodeCount
	}
	if n, ok := v.desired(snap); ok {
		return n
	}
	return v.ng.NodeCount
}
