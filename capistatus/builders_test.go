package capistatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors"
)

// Test fixtures: one converged cluster shaped like the openstack-cluster chart
// renders it (names and labels of chart 0.27.0), which each case then breaks
// in one way.

const (
	stack = "demo-k7qzbfr2xwa4"
	ns    = "magnum-8f2e4c1d9a7b4e6f8a0c2d4e6f8a0b1c"
)

var (
	t0      = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	started = t0.Add(-20 * time.Minute) // the operation began 20 minutes before "now"
)

func i32(v int32) *int32   { return &v }
func str(s string) *string { return &s }
func boolp(b bool) *bool   { return &b }

func cond2(t string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(t0)}
}

func true2(t string) metav1.Condition { return cond2(t, metav1.ConditionTrue, t, "") }

func cond1(t string, status string, severity clusterv1.ConditionSeverity, reason, msg string) clusterv1.Condition {
	return clusterv1.Condition{Type: clusterv1.ConditionType(t), Status: corev1.ConditionStatus(status), Severity: severity, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(t0)}
}

func meta(name string, gen int64, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Generation: gen, Labels: labels, CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}
}

func cluster() *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: meta(stack, 2, map[string]string{labelChartCluster: stack})}
	c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "203.0.113.10", Port: 6443}
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster", Name: stack}
	c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: stack + "-control-plane"}
	c.Status.ObservedGeneration = 2
	c.Status.Phase = "Provisioned"
	c.Status.Initialization.InfrastructureProvisioned = boolp(true)
	c.Status.Initialization.ControlPlaneInitialized = boolp(true)
	c.Status.Conditions = []metav1.Condition{
		true2("Available"), true2("InfrastructureReady"), true2("ControlPlaneInitialized"),
		true2("ControlPlaneAvailable"), true2("WorkersAvailable"), true2("RemoteConnectionProbe"),
	}
	return c
}

func infraCluster() *OpenStackCluster {
	o := &OpenStackCluster{ObjectMeta: meta(stack, 1, map[string]string{labelChartCluster: stack})}
	o.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "203.0.113.10", Port: 6443}
	o.Status.Ready = true
	o.Status.Conditions = clusterv1.Conditions{cond1("Ready", "True", "", "", "")}
	return o
}

func controlPlane() *controlplanev1.KubeadmControlPlane {
	k := &controlplanev1.KubeadmControlPlane{ObjectMeta: meta(stack+"-control-plane", 3, map[string]string{
		labelChartCluster: stack, labelChartComponent: "control-plane"})}
	k.Spec.Replicas = i32(3)
	k.Spec.Version = "v1.33.2"
	k.Status.ObservedGeneration = 3
	k.Status.Replicas, k.Status.UpToDateReplicas, k.Status.ReadyReplicas, k.Status.AvailableReplicas = i32(3), i32(3), i32(3), i32(3)
	k.Status.Version = "v1.33.2"
	k.Status.Initialization.ControlPlaneInitialized = boolp(true)
	k.Status.Conditions = []metav1.Condition{true2("Available"), true2("EtcdClusterHealthy"), true2("ControlPlaneComponentsHealthy"),
		cond2("RollingOut", metav1.ConditionFalse, "NotRollingOut", "")}
	return k
}

func deployment(chartName string, replicas int32) clusterv1.MachineDeployment {
	md := clusterv1.MachineDeployment{ObjectMeta: meta(stack+"-"+chartName, 2, map[string]string{
		labelChartCluster: stack, labelChartComponent: "worker", labelChartNodeGroup: chartName})}
	md.Spec.ClusterName = stack
	md.Spec.Replicas = i32(replicas)
	md.Status.ObservedGeneration = 2
	md.Status.Replicas, md.Status.UpToDateReplicas, md.Status.ReadyReplicas, md.Status.AvailableReplicas = i32(replicas), i32(replicas), i32(replicas), i32(replicas)
	md.Status.Phase = "Running"
	md.Status.Conditions = []metav1.Condition{true2("Available"), cond2("RollingOut", metav1.ConditionFalse, "NotRollingOut", "")}
	return md
}

func machine(name, ip string, labels map[string]string) clusterv1.Machine {
	m := clusterv1.Machine{ObjectMeta: meta(name, 1, labels)}
	m.Spec.ClusterName = stack
	m.Status.ObservedGeneration = 1
	m.Status.Phase = "Running"
	m.Status.Addresses = clusterv1.MachineAddresses{
		{Type: clusterv1.MachineHostName, Address: name},
		{Type: clusterv1.MachineExternalIP, Address: "198.51.100." + ip[len(ip)-1:]},
		{Type: clusterv1.MachineInternalIP, Address: ip},
	}
	m.Status.Conditions = []metav1.Condition{true2("Ready"), true2("UpToDate"), true2("Available")}
	return m
}

func cpMachine(suffix, ip string) clusterv1.Machine {
	return machine(stack+"-control-plane-"+suffix, ip, map[string]string{
		labelCAPICluster: stack, labelCAPIControlPlane: "", labelChartCluster: stack, labelChartComponent: "control-plane"})
}

func workerMachine(chartName, suffix, ip string) clusterv1.Machine {
	return machine(stack+"-"+chartName+"-"+suffix, ip, map[string]string{
		labelCAPICluster: stack, labelCAPIDeployment: stack + "-" + chartName, labelChartCluster: stack,
		labelChartComponent: "worker", labelChartNodeGroup: chartName})
}

func addon(kind, component, phase string) Addon {
	return Addon{Kind: kind, Namespace: ns, Name: stack + "-" + component, ClusterName: stack, Phase: phase, Created: t0.Add(-time.Hour)}
}

// converged is a fully created cluster: 3 control plane machines, a
// default-worker group of 2, addons deployed.
func converged() Snapshot {
	return Snapshot{
		Cluster:            cluster(),
		InfraCluster:       infraCluster(),
		ControlPlane:       controlPlane(),
		MachineDeployments: []clusterv1.MachineDeployment{deployment("default-worker", 2)},
		Machines: []clusterv1.Machine{
			cpMachine("a1b2c", "10.0.0.11"), cpMachine("d3e4f", "10.0.0.12"), cpMachine("g5h6i", "10.0.0.13"),
			workerMachine("default-worker", "x1y2z", "10.0.0.21"), workerMachine("default-worker", "u3v4w", "10.0.0.22"),
		},
		Addons: []Addon{
			addon("HelmRelease", "cni-calico", AddonDeployed),
			addon("HelmRelease", "csi-cinder", AddonDeployed),
			addon("Manifests", "cloud-config", AddonDeployed),
		},
	}
}

// request is Magnum asking about the cluster in status, with its two default
// node groups in the matching node group status.
func request(status string) Request {
	ngStatus := status
	return Request{
		Status:           status,
		StackID:          stack,
		OperationStarted: started,
		ReleaseExists:    operation(status) != "DELETE",
		Now:              t0,
		NodeGroups: []NodeGroup{
			{UUID: "uuid-master", Name: "default-master", Role: "master", Status: ngStatus, IsDefault: true, ChartName: "control-plane", NodeCount: 3},
			{UUID: "uuid-worker", Name: "default-worker", Role: "worker", Status: ngStatus, IsDefault: true, ChartName: "default-worker", NodeCount: 2},
		},
	}
}

// ngStatus sets every node group's status.
func ngStatus(status string) func(*Request) {
	return func(r *Request) {
		for i := range r.NodeGroups {
			r.NodeGroups[i].Status = status
		}
	}
}

type (
	controlplaneDeprecated = controlplanev1.KubeadmControlPlaneDeprecatedStatus
	controlplaneV1Beta1    = controlplanev1.KubeadmControlPlaneV1Beta1DeprecatedStatus
)

func machineErr(s string) *capierrors.MachineStatusError {
	e := capierrors.MachineStatusError(s)
	return &e
}

func clusterErr(s string) *capierrors.ClusterStatusError {
	e := capierrors.ClusterStatusError(s)
	return &e
}
