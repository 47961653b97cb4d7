package kube

// Labels the openstack-cluster chart, CAPI and the addon provider put on the
// objects of one cluster; the watch cache (server/watchcache) indexes
// objects by the first.
const (
	// ChartClusterLabel is set by the chart on everything it renders, and
	// propagated by CAPI to Machines through the machine templates.
	ChartClusterLabel = "capi.stackhpc.com/cluster"
	// ChartNodeGroupLabel names a worker's node group.
	ChartNodeGroupLabel = "capi.stackhpc.com/node-group"
	// CAPIClusterLabel is set by CAPI on Machines and MachineDeployments.
	CAPIClusterLabel = "cluster.x-k8s.io/cluster-name"
	// DeleteMachineAnnotation makes CAPI remove that Machine first when its
	// MachineDeployment scales down.
	DeleteMachineAnnotation = "cluster.x-k8s.io/delete-machine"
)

// DeleteRequestedAnnotation records on a CAPI Cluster when Magnum last asked
// for its deletion (RFC 3339). A delete retried after DELETE_FAILED restarts
// the deletion timeout from there rather than from the deletionTimestamp the
// first attempt set, which never changes.
const DeleteRequestedAnnotation = "magnum-capi.io/delete-requested-at"
