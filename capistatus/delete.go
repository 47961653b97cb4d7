package capistatus

import (
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// deriveDelete decides a deletion. It is complete only when the CAPI Cluster,
// everything it owns that status derivation reads, and the Helm release are
// all gone; until then the reason names what remains, in the order CAPI
// deletes it (worker machines, control plane, OpenStackCluster, Cluster), so
// the first name is what everything else waits on. Errors CAPO reports while
// deleting (e.g. Neutron refusing to delete a port still in use) are quoted
// but do not fail the deletion: CAPO retries, and a failure left over from the
// create must not block deleting a broken cluster. Only the timeout fails it.
func deriveDelete(req Request, snap Snapshot, cfg Config) outcome {
	items := deletionItems(req, snap)
	if len(items) == 0 {
		return outcome{status: DeleteComplete}
	}
	if req.Status == DeleteFailed {
		// Still failed: not ours to move until Magnum starts a new deletion.
		return outcome{status: req.Status, reason: req.StatusReason, failed: true}
	}
	timeout := cfg.timeout(req.Status, req.CreateTimeout)
	if isPast(req, timeout) {
		return outcome{status: DeleteFailed, reason: timedOut(timeout, forDeletion, items), failed: true, timedOut: true, timeout: timeout}
	}
	return outcome{status: DeleteInProgress, reason: waitingFor(forDeletion, items), timeout: timeout}
}

// deletionItems lists what is left, problems first. The rank is the same for
// all but problems so that the order of appending (CAPI's deletion order) is
// kept.
func deletionItems(req Request, snap Snapshot) []item {
	var items []item
	c := snap.Cluster
	if c != nil && c.DeletionTimestamp == nil {
		if req.ReleaseExists {
			items = append(items, item{rankProblem, "Cluster " + c.Name + " (its deletion has not started; the Helm release is still installed)"})
		} else {
			items = append(items, item{rankProblem, "Cluster " + c.Name + " (not being deleted although the Helm release is gone)"})
		}
	}
	if o := snap.InfraCluster; o != nil {
		if f := o.failure(); f != "" {
			items = append(items, item{rankProblem, "OpenStackCluster " + o.Name + ": " + f})
		}
		for _, e := range errorConditions(o.Status.Conditions) {
			items = append(items, item{rankProblem, "OpenStackCluster " + o.Name + ": " + e.fullText()})
		}
		if r := retrying(o.Status.Conditions); r != "" {
			items = append(items, item{rankProblem, "OpenStackCluster " + o.Name + ": " + r})
		}
	}
	var workers, cps []clusterv1.Machine
	for i := range snap.Machines {
		if isControlPlaneMachine(&snap.Machines[i]) {
			cps = append(cps, snap.Machines[i])
		} else {
			workers = append(workers, snap.Machines[i])
		}
	}
	if len(workers) > 0 {
		items = append(items, item{rankCluster, machinesLeft("worker machine", workers)})
	}
	if len(snap.MachineDeployments) > 0 {
		names := make([]string, 0, len(snap.MachineDeployments))
		for _, md := range snap.MachineDeployments {
			names = append(names, md.Name)
		}
		items = append(items, item{rankCluster, "MachineDeployment " + listNames(names, 3)})
	}
	if len(cps) > 0 {
		items = append(items, item{rankCluster, machinesLeft("control plane machine", cps)})
	}
	if k := snap.ControlPlane; k != nil {
		items = append(items, item{rankCluster, "KubeadmControlPlane " + k.Name + finalizers(k.Finalizers)})
	}
	if o := snap.InfraCluster; o != nil {
		items = append(items, item{rankCluster, "OpenStackCluster " + o.Name + finalizers(o.Finalizers)})
	}
	if c != nil && c.DeletionTimestamp != nil {
		items = append(items, item{rankCluster, "Cluster " + c.Name + finalizers(c.Finalizers)})
	}
	if req.ReleaseExists {
		items = append(items, item{rankCluster, "Helm release " + req.StackID})
	}
	return append(items, leftoverItems(snap.Leftovers)...)
}

// leftoverItems names what is left besides the objects CAPI deletes, one
// item per kind in the order first seen: Kubernetes' garbage collector
// deletes these after the Cluster, so they are the last thing waited for.
func leftoverItems(left []Leftover) []item {
	var kinds []string
	names := map[string][]string{}
	for _, l := range left {
		if _, ok := names[l.Kind]; !ok {
			kinds = append(kinds, l.Kind)
		}
		names[l.Kind] = append(names[l.Kind], l.Name)
	}
	items := make([]item, 0, len(kinds))
	for _, k := range kinds {
		items = append(items, item{rankCluster, k + " " + listNames(names[k], 3) + " (Kubernetes' garbage collector deletes it after the Cluster)"})
	}
	return items
}

// machinesLeft names the machines left and, for the first one that says why
// its deletion waits (draining, volumes detaching), that reason.
func machinesLeft(what string, machines []clusterv1.Machine) string {
	s := plural(len(machines), what) + " (" + machineNames(machines) + ")"
	for i := range machines {
		m := &machines[i]
		if d := findV2(m.Status.Conditions, clusterv1.MachineDeletingCondition); d.isTrue() && d.text() != "" && d.text() != d.reason {
			return s + ", " + m.Name + ": " + d.text()
		}
	}
	return s
}

// retrying is why CAPO's deletion of an OpenStackCluster keeps failing when
// it says so only in a Ready condition of severity Warning (an OpenStack
// refusal it retries, e.g. Neutron's NetworkInUse while ports are left), or
// "" (severity Error is quoted as such).
func retrying(conds clusterv1.Conditions) string {
	if c := findV1(conds, clusterv1.ReadyV1Beta1Condition); c.isFalse() && c.severity == string(clusterv1.ConditionSeverityWarning) && oneLine(c.message) != "" {
		return c.fullText()
	}
	return ""
}

// finalizers names what holds an object that is being deleted: with CAPO's
// and CAPI's own finalizers this shows e.g. the janitor's, which waits for
// load balancers and volumes.
func finalizers(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return " (finalizers: " + strings.Join(f, ", ") + ")"
}

// Deleted reports whether nothing of a cluster status derivation reads is
// left: the deletion Derive reports DELETE_COMPLETE for (before the
// caller's own checks of what lies outside the snapshot).
func Deleted(releaseExists bool, snap Snapshot) bool {
	return len(deletionItems(Request{ReleaseExists: releaseExists}, snap)) == 0
}
