package capistatus

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Completeness of one replicated group (the control plane or a
// MachineDeployment) is judged the same way for both, and each unmet rule
// becomes a short "facet" a user can read: the controller has seen the latest
// spec (observedGeneration), every replica count equals the desired count, no
// machine is of an older spec or being deleted, and the object's own Available
// condition agrees. Counts come first because they say how far along a rollout
// is; a condition message is quoted only when the counts are fine.

// replicaSet is one group's counts; nil means the controller has not reported it.
type replicaSet struct {
	desired                              int32
	replicas, upToDate, ready, available *int32
}

// countFacets lists the counts that differ from desired.
func (r replicaSet) countFacets() []string {
	if r.replicas == nil && r.upToDate == nil && r.ready == nil {
		return []string{"machine counts not reported yet"}
	}
	d := int(r.desired)
	var out []string
	if r.replicas != nil && *r.replicas != r.desired {
		out = append(out, fmt.Sprintf("%s, want %d", plural(int(*r.replicas), "machine"), d))
	}
	// Up to date is measured against the machines that exist, so that a
	// group still scaling up does not also read as out of date; available
	// is only named when it says more than ready (MinReadySeconds).
	existing := r.desired
	if r.replicas != nil && *r.replicas < existing {
		existing = *r.replicas
	}
	if r.upToDate == nil || *r.upToDate < existing {
		out = append(out, fmt.Sprintf("%d of %d machines up to date", deref32(r.upToDate), d))
	}
	if r.ready == nil || *r.ready < r.desired {
		out = append(out, fmt.Sprintf("%d of %d machines ready", deref32(r.ready), d))
	}
	if r.available == nil && r.ready == nil || r.available != nil && *r.available < r.desired && (r.ready == nil || *r.available < *r.ready) {
		out = append(out, fmt.Sprintf("%d of %d machines available", deref32(r.available), d))
	}
	return out
}

// machineFacets adds what the machines themselves show and the counts cannot:
// leftovers being deleted, machines of an older spec, the number of machines,
// and why the first unready machine is not ready.
func machineFacets(c machineCounts, desired int32, counts []string) []string {
	var out []string
	if c.live != int(desired) && len(counts) == 0 {
		out = append(out, fmt.Sprintf("%s, want %d", plural(c.live, "machine"), desired))
	}
	if c.outdated > 0 {
		out = append(out, plural(c.outdated, "machine")+" of an older spec")
	}
	if c.deleting > 0 {
		out = append(out, plural(c.deleting, "machine")+" being deleted")
	}
	if c.unobserved > 0 {
		out = append(out, plural(c.unobserved, "machine")+" not yet reconciled since its spec changed")
	}
	if c.notReady != nil {
		out = append(out, "machine "+c.notReady.Name+": "+c.notReadyWhy)
	}
	return out
}

// generationFacet says a controller has not finished reconciling the
// latest spec. Cluster API's controllers set observedGeneration only after
// a reconcile without error, so it also stays behind while a controller
// keeps failing (the control plane's cannot reach the workload cluster,
// which at creation is until the first machine is up): the status it still
// writes (conditions, machines) tells why, and follows (lagFacets).
func generationFacet(generation, observed int64, kind string) []string {
	if observed < generation {
		return []string{fmt.Sprintf("%s controller has not yet reconciled the latest spec (generation %d, observed %d)", kind, generation, observed)}
	}
	return nil
}

// lagFacets are what a lagging group's status still says that its counts,
// written for an older spec, may not: the machines (the Machine controller
// writes theirs) and the object's own Available condition, which Cluster
// API writes even when the reconcile fails.
func lagFacets(lag []string, machines []clusterv1.Machine, servers []OpenStackServer, desired int32, v2 []metav1.Condition, v1 clusterv1.Conditions, v1Available clusterv1.ConditionType) []string {
	out := lag
	if c := firstOf(v2, v1, clusterv1.AvailableCondition, v1Available); !c.isTrue() && oneLine(c.message) != "" {
		out = append(out, "not Available"+suffixText(c))
	}
	return append(out, machineFacets(countMachines(machines, servers), desired, lag)...)
}

// controlPlaneFacets says what keeps the control plane from being complete;
// nil means complete.
func controlPlaneFacets(kcp *controlplanev1.KubeadmControlPlane, name string, machines []clusterv1.Machine, servers []OpenStackServer) []string {
	if kcp == nil {
		return []string{"KubeadmControlPlane " + name + " not found"}
	}
	if kcp.DeletionTimestamp != nil {
		return []string{"KubeadmControlPlane " + kcp.Name + " is being deleted"}
	}
	if f := generationFacet(kcp.Generation, kcp.Status.ObservedGeneration, "KubeadmControlPlane"); f != nil {
		return lagFacets(f, machines, servers, controlPlaneDesired(kcp), kcp.Status.Conditions, controlPlaneV1(kcp), clusterv1.ReadyV1Beta1Condition)
	}
	r := replicaSet{desired: controlPlaneDesired(kcp), replicas: kcp.Status.Replicas, upToDate: kcp.Status.UpToDateReplicas,
		ready: kcp.Status.ReadyReplicas, available: kcp.Status.AvailableReplicas}
	if d := kcp.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		// A pre-1.11 KCP controller only wrote the v1beta1 counts.
		r.upToDate = orInt32(r.upToDate, d.V1Beta1.UpdatedReplicas)
		r.ready = orInt32(r.ready, d.V1Beta1.ReadyReplicas)
	}
	facets := r.countFacets()
	if kcp.Spec.Version != "" && kcp.Status.Version != kcp.Spec.Version {
		if kcp.Status.Version == "" {
			facets = append(facets, "no machine runs "+kcp.Spec.Version+" yet")
		} else {
			facets = append(facets, "upgrading from "+kcp.Status.Version+" to "+kcp.Spec.Version)
		}
	}
	facets = append(facets, machineFacets(countMachines(machines, servers), r.desired, facets)...)
	if len(facets) == 0 {
		facets = conditionFacets(kcp.Status.Conditions, controlPlaneV1(kcp), clusterv1.ReadyV1Beta1Condition)
	}
	return facets
}

// deploymentFacets says what keeps a MachineDeployment from being complete;
// nil means complete.
func deploymentFacets(md *clusterv1.MachineDeployment, machines []clusterv1.Machine, servers []OpenStackServer) []string {
	if md.DeletionTimestamp != nil {
		return []string{"MachineDeployment " + md.Name + " is being deleted"}
	}
	if f := generationFacet(md.Generation, md.Status.ObservedGeneration, "MachineDeployment"); f != nil {
		return lagFacets(f, machines, servers, deploymentDesired(md), md.Status.Conditions, deploymentV1(md), clusterv1.MachineDeploymentAvailableV1Beta1Condition)
	}
	r := replicaSet{desired: deploymentDesired(md), replicas: md.Status.Replicas, upToDate: md.Status.UpToDateReplicas,
		ready: md.Status.ReadyReplicas, available: md.Status.AvailableReplicas}
	if d := md.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		r.upToDate = orInt32(r.upToDate, d.V1Beta1.UpdatedReplicas)
		r.ready = orInt32(r.ready, d.V1Beta1.ReadyReplicas)
		r.available = orInt32(r.available, d.V1Beta1.AvailableReplicas)
	}
	facets := r.countFacets()
	facets = append(facets, machineFacets(countMachines(machines, servers), r.desired, facets)...)
	if len(facets) == 0 {
		facets = conditionFacets(md.Status.Conditions, deploymentV1(md), clusterv1.MachineDeploymentAvailableV1Beta1Condition)
	}
	return facets
}

// conditionFacets checks the object's own summary once the counts agree: it
// must be Available and not rolling out or scaling. The v1beta2 conditions
// are read first; v1beta1's fallback only exists for Available/Ready.
func conditionFacets(v2 []metav1.Condition, v1 clusterv1.Conditions, v1Available clusterv1.ConditionType) []string {
	var out []string
	if c := firstOf(v2, v1, clusterv1.AvailableCondition, v1Available); !c.isTrue() {
		out = append(out, "not Available"+suffixText(c))
	}
	for _, t := range []string{clusterv1.RollingOutCondition, clusterv1.ScalingUpCondition, clusterv1.ScalingDownCondition} {
		if c := findV2(v2, t); c.isTrue() {
			out = append(out, t+suffixText(c))
		}
	}
	return out
}

// suffixText is ": <text>" when the condition explains itself.
func suffixText(c cond) string {
	if t := c.text(); t != "" {
		return ": " + t
	}
	return ""
}

// controlPlaneDesired is spec.replicas; CAPI defaults it to 1.
func controlPlaneDesired(kcp *controlplanev1.KubeadmControlPlane) int32 {
	if kcp.Spec.Replicas != nil {
		return *kcp.Spec.Replicas
	}
	return 1
}

// Cluster autoscaler annotations: CAPI's MachineDeployment defaulting uses the
// minimum size when spec.replicas is unset, which is how the chart renders an
// autoscaled group.
const autoscalerMinSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"

// deploymentDesired is spec.replicas, or what CAPI's defaulting would make it.
func deploymentDesired(md *clusterv1.MachineDeployment) int32 {
	if md.Spec.Replicas != nil {
		return *md.Spec.Replicas
	}
	if v, err := strconv.ParseInt(md.Annotations[autoscalerMinSize], 10, 32); err == nil && v >= 0 {
		return int32(v)
	}
	return 1
}

func deref32(v *int32) int {
	if v == nil {
		return 0
	}
	return int(*v)
}

func orInt32(v *int32, fallback int32) *int32 {
	if v != nil {
		return v
	}
	return &fallback
}
