package capistatus

import (
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// outcome is the cluster-level decision, which node groups follow.
type outcome struct {
	status, reason string
	// failed: the operation failed, so node groups still in progress fail too.
	failed bool
	// timedOut: it failed by running out of time; node groups then name what
	// they themselves were still waiting for.
	timedOut bool
	timeout  time.Duration
}

// Derive computes what Magnum should store for the cluster and its node groups
// from one snapshot. Only the states Magnum polls (CREATE_, UPDATE_, DELETE_
// and ROLLBACK_IN_PROGRESS) are moved; any other status is returned with its
// reason unchanged, except that a DELETE_FAILED cluster whose objects and
// release are all gone becomes DELETE_COMPLETE. api_address, coe_version and
// every node group's node_count and node_addresses are refreshed whatever the
// status. docs/status.md lists every transition.
func Derive(req Request, snap Snapshot, cfg Config) Result {
	cfg = cfg.withDefaults()
	snap = snap.sorted()
	views, unclaimed := viewNodeGroups(req, snap)
	var out outcome
	switch {
	case req.Status == DeleteInProgress || req.Status == DeleteFailed:
		out = deriveDelete(req, snap, cfg)
	case drives(req.Status):
		out = deriveProvisioning(req, snap, cfg, views, unclaimed)
	default:
		out = outcome{status: req.Status, reason: req.StatusReason}
	}
	res := Result{
		Status:       out.status,
		StatusReason: out.reason,
		APIAddress:   apiAddress(req, snap),
		COEVersion:   coeVersion(req, snap),
		NodeGroups:   make([]NodeGroupResult, 0, len(views)),
	}
	for _, v := range views {
		res.NodeGroups = append(res.NodeGroups, deriveNodeGroup(v, snap, out))
	}
	if res.StatusReason != req.StatusReason {
		res.Rewritten = Rewritten(snap)
	}
	return res
}

// deriveProvisioning decides a create, update or rollback: FAILED at once on a
// failure no retry will fix, COMPLETE when nothing is awaited, FAILED when the
// time is up, IN_PROGRESS otherwise.
func deriveProvisioning(req Request, snap Snapshot, cfg Config, views []groupView, unclaimed []*clusterv1.MachineDeployment) outcome {
	if fatal := fatalProblems(req, snap, cfg); len(fatal) > 0 {
		return outcome{status: failed(req.Status), reason: render(fatal), failed: true}
	}
	items := provisioningItems(req, snap, cfg, views, unclaimed)
	if len(items) == 0 {
		return outcome{status: completed(req.Status)}
	}
	timeout := cfg.timeout(req.Status, req.CreateTimeout)
	if isPast(req, timeout) {
		return outcome{status: failed(req.Status), reason: timedOut(timeout, "", items), failed: true, timedOut: true, timeout: timeout}
	}
	return outcome{status: req.Status, reason: waitingFor("", items), timeout: timeout}
}

// isPast reports whether the operation has run for longer than timeout. With
// no start time or no clock, nothing times out.
func isPast(req Request, timeout time.Duration) bool {
	if req.OperationStarted.IsZero() || req.Now.IsZero() {
		return false
	}
	return !req.Now.Before(req.OperationStarted.Add(timeout))
}

// fatalProblems are failures that fail a create or update at once: CAPO's
// terminal failureReason/failureMessage (it stops reconciling, e.g. after
// Octavia refused the API load balancer for quota), the same deprecated fields
// on the Cluster and the KubeadmControlPlane, and an addon that has stayed
// Failed past the grace period.
func fatalProblems(req Request, snap Snapshot, cfg Config) []item {
	var out []item
	if o := snap.InfraCluster; o != nil {
		if f := o.failure(); f != "" {
			out = append(out, item{rankProblem, "OpenStackCluster " + o.Name + " failed: " + f})
		}
	}
	if c := snap.Cluster; c != nil {
		if d := c.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			if f := joinFailure((*string)(d.V1Beta1.FailureReason), d.V1Beta1.FailureMessage); f != "" {
				out = append(out, item{rankProblem, "Cluster " + c.Name + " failed: " + f})
			}
		}
	}
	if k := snap.ControlPlane; k != nil {
		if d := k.Status.Deprecated; d != nil && d.V1Beta1 != nil {
			reason := string(d.V1Beta1.FailureReason)
			if f := joinFailure(&reason, d.V1Beta1.FailureMessage); f != "" {
				out = append(out, item{rankProblem, "KubeadmControlPlane " + k.Name + " failed: " + f})
			}
		}
	}
	for _, a := range snap.Addons {
		if a.phase() == AddonFailed && !a.FailedSince.IsZero() && !req.Now.IsZero() && req.Now.Sub(a.FailedSince) >= cfg.AddonFailureGrace {
			out = append(out, item{rankProblem, "addon " + addonName(req.StackID, a) + " failed: " + addonFailure(a)})
		}
	}
	return out
}

// provisioningItems lists everything a create or update still waits for.
func provisioningItems(req Request, snap Snapshot, cfg Config, views []groupView, unclaimed []*clusterv1.MachineDeployment) []item {
	var items []item
	if !req.ReleaseExists {
		items = append(items, item{rankCluster, "Helm release " + req.StackID + " to be installed"})
	}
	if req.ReleaseWriting {
		items = append(items, item{rankCluster, "Helm release " + req.StackID + " still being written (its call ran out of time first)"})
	}
	clusterOwn, summary := clusterItems(req, snap)
	items = append(items, clusterOwn...)
	items = append(items, infrastructureItems(snap)...)
	cpSeen := false
	for _, v := range views {
		if v.controlPlane {
			cpSeen = true
		}
		items = append(items, groupItems(v, snap)...)
	}
	if !cpSeen {
		// Magnum always has a control plane node group; without one in the
		// request (a caller that passed none), the control plane still counts.
		cp := groupView{ng: NodeGroup{Status: req.Status}, controlPlane: true, name: controlPlaneName(req.StackID, snap), machines: controlPlaneMachines(snap)}
		items = append(items, groupItems(cp, snap)...)
	}
	for _, md := range unclaimed {
		machines := workerMachines(snap, md.Labels[labelChartNodeGroup], md.Name)
		if f := deploymentFacets(md, machines, snap.Servers); len(f) > 0 {
			items = append(items, labelled(rankWorkers, "MachineDeployment "+md.Name, f))
		}
		items = appendProblems(items, machineProblems(machines, snap.Servers))
	}
	if summary != nil && !explains(items) {
		items = append(items, *summary)
	}
	return append(items, addonItems(req, snap, cfg)...)
}
