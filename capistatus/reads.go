package capistatus

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// What derivation reads of the CAPI objects' labels, annotations and
// conditions, so that a cache can keep only that (server/watchcache drops
// the rest, which at thousands of clusters is most of its memory).
// Derivation reads nothing else of either map; a new reader of a label,
// annotation or condition type adds it here (conditions: TestMain checks
// every lookup the tests make is listed).

// LabelsRead are the label keys derivation reads on Clusters,
// KubeadmControlPlanes, MachineDeployments and Machines: which cluster,
// node group and role an object is.
var LabelsRead = []string{
	labelCAPICluster, labelChartCluster, labelChartNodeGroup, labelChartComponent,
	labelAddonCluster, labelCAPIDeployment, labelCAPIControlPlane,
}

// AnnotationsRead are the annotation keys derivation reads (a node group's
// autoscaling bounds).
var AnnotationsRead = []string{autoscalerMinSize}

// conditionTypesRead are the condition types derivation looks up by name
// (findV2, findV1), of either condition set.
var conditionTypesRead = map[string]bool{
	clusterv1.AvailableCondition:                        true,
	clusterv1.ReadyCondition:                            true,
	clusterv1.InfrastructureReadyCondition:              true,
	clusterv1.ClusterRemoteConnectionProbeCondition:     true,
	clusterv1.ClusterControlPlaneInitializedCondition:   true,
	clusterv1.ClusterControlPlaneAvailableCondition:     true,
	clusterv1.MachineUpToDateCondition:                  true,
	clusterv1.MachineDeletingCondition:                  true,
	clusterv1.RollingOutCondition:                       true,
	clusterv1.ScalingUpCondition:                        true,
	clusterv1.ScalingDownCondition:                      true,
	"EtcdClusterHealthy":                                true,
	"ControlPlaneComponentsHealthy":                     true,
	string(clusterv1.ControlPlaneReadyV1Beta1Condition): true,
	"InstanceReady":                                     true,
}

// ConditionMatters reports whether derivation can tell that a condition is
// there: its type is looked up by name, or it carries a message (quoted or
// listed for the operator's log: snapshotMessages), or it is a v1beta1
// condition reporting a retried error (errorConditions). A condition that
// does not matter is True or False without a message, of a type nothing
// asks for; dropping it changes no answer. Severity is "" for v1beta2
// conditions.
//
// Of a condition that matters, derivation reads these four fields and
// nothing else: not its time nor its observed generation, which the
// watch cache drops so that equal conditions of many clusters are kept
// once (cond, findV2, findV1).
func ConditionMatters(condType, status, severity, message string) bool {
	return conditionTypesRead[condType] || message != "" ||
		(status == "False" && severity == string(clusterv1.ConditionSeverityError))
}
