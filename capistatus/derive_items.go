package capistatus

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

// clusterItems are the Cluster object's own reasons to wait, and its
// Available summary when that is false.
func clusterItems(req Request, snap Snapshot) ([]item, *item) {
	c := snap.Cluster
	if c == nil {
		return []item{{rankCluster, "Cluster " + req.StackID + " not found"}}, nil
	}
	var items []item
	if c.DeletionTimestamp != nil {
		items = append(items, item{rankCluster, "Cluster " + c.Name + " is being deleted"})
	}
	if c.Spec.Paused != nil && *c.Spec.Paused {
		items = append(items, item{rankCluster, "Cluster " + c.Name + " is paused (spec.paused)"})
	}
	if f := generationFacet(c.Generation, c.Status.ObservedGeneration, "Cluster"); f != nil {
		items = append(items, item{rankCluster, f[0]})
	}
	if p := unreachable(c); p.found {
		// Every controller that talks to the cluster fails while this
		// lasts, which their own status only shows as lagging.
		items = append(items, item{rankProblem, "Cluster " + c.Name + " cannot reach the cluster's API server: " + p.text()})
	}
	if o := snap.InfraCluster; o != nil && o.isReady() {
		// Only once CAPO says ready: before that the OpenStackCluster item
		// explains more.
		if ir := firstOf(c.Status.Conditions, clusterV1(c), "InfrastructureReady", "InfrastructureReady"); !ir.isTrue() {
			items = append(items, item{rankInfrastructure, "Cluster " + c.Name + " InfrastructureReady" + suffixText(ir)})
		}
	}
	if av := firstOf(c.Status.Conditions, clusterV1(c), "Available", "Ready"); !av.isTrue() {
		return items, &item{rankSummary, "Cluster " + c.Name + " not Available" + suffixText(av)}
	}
	return items, nil
}

// infrastructureItems: the OpenStackCluster must exist and be ready; errors
// CAPO reports while retrying (v1beta1 conditions with severity Error) are the
// refusals users never saw before, so they lead the reason.
func infrastructureItems(snap Snapshot) []item {
	o := snap.InfraCluster
	if o == nil {
		name := ""
		if c := snap.Cluster; c != nil {
			name = c.Spec.InfrastructureRef.Name
		}
		if name == "" {
			return []item{{rankInfrastructure, "OpenStackCluster not found"}}
		}
		return []item{{rankInfrastructure, "OpenStackCluster " + name + " not found"}}
	}
	var items []item
	for _, c := range errorConditions(o.Status.Conditions) {
		items = append(items, item{rankProblem, "OpenStackCluster " + o.Name + ": " + c.fullText()})
	}
	if !o.isReady() {
		items = append(items, item{rankInfrastructure, "OpenStackCluster " + o.Name + " not ready" + suffixText(findV1(o.Status.Conditions, "Ready"))})
	}
	return items
}

// groupItems: a node group's part of the cluster's wait.
func groupItems(v groupView, snap Snapshot) []item {
	label, r := "node group "+v.ng.Name, rankWorkers
	if v.controlPlane {
		label, r = "control plane", rankControlPlane
	}
	switch {
	case operation(v.ng.Status) == "DELETE":
		// Deleting a node group is part of an update: the update is done when
		// the group's machines are gone.
		if v.ng.Status == DeleteInProgress {
			if rem := v.remaining(snap); len(rem) > 0 {
				return []item{labelled(r, label+" deletion", rem)}
			}
		}
		return nil
	case inProgress(v.ng.Status) || v.md != nil || v.controlPlane:
		items := appendProblems(nil, machineProblems(v.machines, snap.Servers))
		if f := v.progressFacets(snap); len(f) > 0 {
			items = append(items, labelled(r, label, f))
		}
		return items
	}
	// A finished node group with no MachineDeployment (e.g. its create failed
	// before Helm ran) has nothing to wait for.
	return nil
}

func appendProblems(items []item, problems []string) []item {
	for _, p := range problems {
		items = append(items, item{rankProblem, p})
	}
	return items
}

// explains: some item already says why infrastructure, control plane or
// workers are not there, which the Cluster's Available summary would only
// repeat.
func explains(items []item) bool {
	for _, it := range items {
		if it.rank == rankInfrastructure || it.rank == rankControlPlane || it.rank == rankWorkers {
			return true
		}
	}
	return false
}

// unreachable is the Cluster's RemoteConnectionProbe when it failed after
// the control plane was initialized: the cluster's API server stopped
// answering. Before that a failing probe only means the cluster is not up
// yet.
func unreachable(c *clusterv1.Cluster) cond {
	p := findV2(c.Status.Conditions, clusterv1.ClusterRemoteConnectionProbeCondition)
	initialized := firstOf(c.Status.Conditions, clusterV1(c), clusterv1.ClusterControlPlaneInitializedCondition, clusterv1.ControlPlaneInitializedV1Beta1Condition)
	if !p.isFalse() || !initialized.isTrue() {
		return cond{}
	}
	return p
}
