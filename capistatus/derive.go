package capistatus

import (
	"strings"
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
		if f := deploymentFacets(md, machines); len(f) > 0 {
			items = append(items, labelled(rankWorkers, "MachineDeployment "+md.Name, f))
		}
		items = appendProblems(items, machineProblems(machines))
	}
	if summary != nil && !explains(items) {
		items = append(items, *summary)
	}
	return append(items, addonItems(req, snap, cfg)...)
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
		items := appendProblems(nil, machineProblems(v.machines))
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

// addonItems: every addon must be Deployed. A Failed addon within its grace
// period leads the reason (the provider may still recover it); the others are
// listed with their phase.
func addonItems(req Request, snap Snapshot, cfg Config) []item {
	var items []item
	var waiting []string
	for _, a := range snap.Addons {
		switch p := a.phase(); {
		case a.Deleting:
			waiting = append(waiting, addonName(req.StackID, a)+" (being removed)")
		case p == AddonDeployed:
		case p == AddonFailed:
			items = append(items, item{rankProblem, "addon " + addonName(req.StackID, a) + " failed, retrying for up to " + minutes(cfg.AddonFailureGrace) + ": " + addonFailure(a)})
		default:
			waiting = append(waiting, addonName(req.StackID, a)+" ("+p+")")
		}
	}
	if len(waiting) > 0 {
		items = append(items, item{rankAddons, "addons " + listNames(waiting, 5)})
	}
	return items
}

// addonName drops the release prefix the chart puts on every addon name.
func addonName(stackID string, a Addon) string {
	if n := strings.TrimPrefix(a.Name, stackID+"-"); n != "" {
		return n
	}
	return a.Name
}

func addonFailure(a Addon) string {
	if m := oneLine(a.FailureMessage); m != "" {
		return truncate(m, maxConditionText)
	}
	return "no failure message"
}
