package capistatus

import (
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Keys of health_status_reason besides one per worker node group.
const (
	HealthKeyAPI            = "api"
	HealthKeyInfrastructure = "infrastructure"
	HealthKeyControlPlane   = "control_plane"
	HealthKeyAddons         = "addons"
	// HealthKeyCredential is there only while the cluster's application
	// credential is due for renewal (WithCredentialExpiry).
	HealthKeyCredential = "credential"
	// healthOK is the value of a healthy key, as Magnum's own Kubernetes
	// monitor wrote for the API ("api": "ok").
	healthOK = "ok"
)

// probeState is one key's verdict.
type probeState int

const (
	probeOK probeState = iota
	probeUnknown
	probeUnhealthy
)

type probe struct {
	state probeState
	text  string
}

func ok() probe                      { return probe{probeOK, healthOK} }
func unhealthy(text string) probe    { return probe{probeUnhealthy, text} }
func unknownProbe(text string) probe { return probe{probeUnknown, text} }

// DeriveHealth computes Magnum's health_status and health_status_reason from
// management-cluster objects only (the workload cluster is never contacted;
// CAPI probes its API server). Reasons has the keys api, infrastructure,
// control_plane, addons and one per worker node group that is not being
// deleted (its Magnum name; "nodegroup:<name>" if that name is one of the
// fixed keys), plus one per MachineDeployment no node group claims. Values are
// strings (Magnum's DictOfStringsField): "ok" or what is wrong.
//
// The status is UNKNOWN when the Cluster is not found, its control plane was
// never initialized (there is no cluster to be healthy yet) or it is being
// deleted (there soon will be none), UNHEALTHY when any
// key is unhealthy, UNKNOWN when a key cannot tell, else HEALTHY.
func DeriveHealth(req Request, snap Snapshot) Health {
	snap = snap.sorted()
	reasons := map[string]string{}
	worst := probeOK
	set := func(key string, p probe) {
		reasons[key] = p.text
		if p.state > worst {
			worst = p.state
		}
	}
	set(HealthKeyAPI, apiProbe(req, snap))
	set(HealthKeyInfrastructure, infrastructureProbe(snap))
	set(HealthKeyControlPlane, controlPlaneProbe(req, snap))
	views, unclaimed := viewNodeGroups(req, snap)
	for _, v := range views {
		if v.controlPlane || operation(v.ng.Status) == "DELETE" {
			continue
		}
		set(nodeGroupKey(v.ng.Name), deploymentProbe(v.md, v.name))
	}
	for _, md := range unclaimed {
		name := md.Labels[labelChartNodeGroup]
		if name == "" {
			name = md.Name
		}
		set(nodeGroupKey(name), deploymentProbe(md, md.Name))
	}
	set(HealthKeyAddons, addonsProbe(req, snap))

	status := Healthy
	switch {
	case snap.Cluster == nil || !controlPlaneInitialized(snap.Cluster) || snap.Cluster.DeletionTimestamp != nil:
		status = Unknown
	case worst == probeUnhealthy:
		status = Unhealthy
	case worst == probeUnknown:
		status = Unknown
	}
	return Health{Status: status, Reasons: reasons}
}

// nodeGroupKey keeps a node group named like a fixed key from overwriting it.
func nodeGroupKey(name string) string {
	switch name {
	case HealthKeyAPI, HealthKeyInfrastructure, HealthKeyControlPlane, HealthKeyAddons, HealthKeyCredential:
		return "nodegroup:" + name
	}
	return name
}

// controlPlaneInitialized: the Cluster has ever had a working API server.
func controlPlaneInitialized(c *clusterv1.Cluster) bool {
	if i := c.Status.Initialization.ControlPlaneInitialized; i != nil && *i {
		return true
	}
	return firstOf(c.Status.Conditions, clusterV1(c), clusterv1.ClusterControlPlaneInitializedCondition, clusterv1.ControlPlaneInitializedV1Beta1Condition).isTrue()
}

// apiProbe: CAPI's RemoteConnectionProbe (v1beta2) says whether the
// management cluster reaches the workload API server. Older controllers only
// have the control plane's readiness, which is the next best signal.
func apiProbe(req Request, snap Snapshot) probe {
	c := snap.Cluster
	if c == nil {
		return unknownProbe("Cluster " + req.StackID + " not found")
	}
	if c.DeletionTimestamp != nil {
		return unknownProbe("Cluster " + c.Name + " is being deleted")
	}
	if p := findV2(c.Status.Conditions, clusterv1.ClusterRemoteConnectionProbeCondition); p.found {
		return verdict(p, "API server not reachable")
	}
	cp := firstOf(c.Status.Conditions, clusterV1(c), clusterv1.ClusterControlPlaneAvailableCondition, clusterv1.ControlPlaneReadyV1Beta1Condition)
	if !cp.found {
		return unknownProbe("no probe of the API server reported")
	}
	return verdict(cp, "control plane not available")
}

// verdict turns a condition into a probe: True is ok, False unhealthy, Unknown
// (or missing) unknown.
func verdict(c cond, fallback string) probe {
	text := c.text()
	if text == "" {
		text = fallback
	}
	switch {
	case c.isTrue():
		return ok()
	case c.isFalse():
		return unhealthy(text)
	}
	return unknownProbe(text)
}

func infrastructureProbe(snap Snapshot) probe {
	o := snap.InfraCluster
	if o == nil {
		return unhealthy("OpenStackCluster not found")
	}
	if f := o.failure(); f != "" {
		return unhealthy(f)
	}
	if errs := errorConditions(o.Status.Conditions); len(errs) > 0 {
		return unhealthy(errs[0].fullText())
	}
	if !o.isReady() {
		return unhealthy("OpenStackCluster " + o.Name + " not ready" + suffixText(findV1(o.Status.Conditions, "Ready")))
	}
	return ok()
}

// controlPlaneProbe: the KubeadmControlPlane must be Available with etcd and
// the control plane components healthy, and all its machines ready.
func controlPlaneProbe(req Request, snap Snapshot) probe {
	k := snap.ControlPlane
	if k == nil {
		return unhealthy("KubeadmControlPlane " + controlPlaneName(req.StackID, snap) + " not found")
	}
	v1 := controlPlaneV1(k)
	if c := firstOf(k.Status.Conditions, v1, clusterv1.AvailableCondition, clusterv1.ReadyV1Beta1Condition); !c.isTrue() {
		return verdict(c, "not available")
	}
	for _, t := range []string{"EtcdClusterHealthy", "ControlPlaneComponentsHealthy"} {
		if c := firstOf(k.Status.Conditions, v1, t, clusterv1.ConditionType(t)); c.isFalse() {
			return unhealthy(t + suffixText(c))
		}
	}
	if p := readyCount(k.Status.ReadyReplicas, controlPlaneDesired(k)); p.state != probeOK {
		return p
	}
	return ok()
}

// deploymentProbe: a worker group is healthy when its MachineDeployment is
// Available and every desired machine is ready.
func deploymentProbe(md *clusterv1.MachineDeployment, name string) probe {
	if md == nil {
		return unhealthy("MachineDeployment " + name + " not found")
	}
	if c := firstOf(md.Status.Conditions, deploymentV1(md), clusterv1.AvailableCondition, clusterv1.MachineDeploymentAvailableV1Beta1Condition); !c.isTrue() {
		return verdict(c, "not available")
	}
	return readyCount(md.Status.ReadyReplicas, deploymentDesired(md))
}

func readyCount(ready *int32, desired int32) probe {
	if ready == nil {
		return unknownProbe("ready machines not reported")
	}
	if *ready < desired {
		return unhealthy(fmt.Sprintf("%d of %d machines ready", *ready, desired))
	}
	return ok()
}

// addonsProbe: a Failed addon is unhealthy, and so is one that has never been
// deployed (Unknown, Pending, Preparing, Installing): the workload cluster
// lacks what it provides (e.g. its CNI). Upgrading and Uninstalling addons
// count as healthy: the previous release keeps serving meanwhile.
func addonsProbe(req Request, snap Snapshot) probe {
	var bad []string
	for _, a := range snap.Addons {
		switch p := a.phase(); p {
		case AddonDeployed, AddonUpgrading, AddonUninstalling:
		case AddonFailed:
			bad = append(bad, addonName(req.StackID, a)+" failed: "+addonFailure(a))
		default:
			bad = append(bad, addonName(req.StackID, a)+" "+p)
		}
	}
	if len(bad) == 0 {
		return ok()
	}
	return unhealthy(truncate(listNames(bad, 5), maxReasonLen))
}

// ControlPlaneInitialized reports whether the Cluster has ever had a working
// API server (CAPI's ControlPlaneInitialized): from then on Cluster API
// keeps an admin kubeconfig for it.
func ControlPlaneInitialized(c *clusterv1.Cluster) bool {
	return c != nil && controlPlaneInitialized(c)
}
