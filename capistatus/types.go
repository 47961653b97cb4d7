package capistatus

import (
	"time"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Snapshot is one consistent read of a cluster's objects (from the sidecar's
// watch cache, or from files). Derive trusts it to be at least as new as the
// sidecar's last write of the release: a snapshot older than that can show the
// previous, fully rolled-out spec and so report an update complete too early.
type Snapshot struct {
	Cluster            *clusterv1.Cluster // nil: not found
	InfraCluster       *OpenStackCluster  // nil: not found
	ControlPlane       *controlplanev1.KubeadmControlPlane
	MachineDeployments []clusterv1.MachineDeployment
	Machines           []clusterv1.Machine
	// Servers are CAPO's OpenStackServers of the machines (label
	// cluster.x-k8s.io/cluster-name), where Nova's refusals are.
	Servers []OpenStackServer
	Addons  []Addon
	// Leftovers are the cluster's other objects still in the namespace: the
	// templates the chart keeps past an uninstall and the Secrets Cluster API
	// made, which Kubernetes' garbage collector deletes once the Cluster is
	// gone. The watch cache does not carry them; they are read only when
	// everything else of a deletion is gone.
	Leftovers []Leftover
}

// Leftover is one object of the cluster's outside the kinds status watches.
type Leftover struct{ Kind, Name string }

// Request is the Magnum side: what Magnum believes and when the operation
// started.
type Request struct {
	// Status is Magnum's current cluster status, e.g. "CREATE_IN_PROGRESS".
	Status string
	// StatusReason is Magnum's current status_reason, returned unchanged when
	// Derive does not move the status.
	StatusReason string
	// StackID is the Helm release name, which is also the CAPI Cluster name.
	StackID string
	// OperationStarted: create: the cluster's created_at; update: when the
	// sidecar last applied the release; delete: when deletion began. Zero means
	// unknown, and then no timeout applies.
	OperationStarted time.Time
	// CreateTimeout is Magnum's create_timeout (0: Config.DefaultCreateTimeout).
	CreateTimeout time.Duration
	// ReleaseExists says whether the Helm release is still installed.
	ReleaseExists bool
	// ReleaseWriting says Helm is still writing the release for an
	// operation whose call ran out of time first (it finishes in the
	// background): the cluster is not done before it is.
	ReleaseWriting bool
	// NodeGroups are Magnum's node groups of this cluster, the control plane
	// (role "master") included.
	NodeGroups []NodeGroup
	// CurrentAPIAddress and CurrentCOEVersion are Magnum's current values,
	// returned when the snapshot cannot tell (e.g. the KubeadmControlPlane is
	// briefly missing from the cache), so they are never reset to empty.
	CurrentAPIAddress string
	CurrentCOEVersion string
	Now               time.Time
}

// NodeGroup is one of Magnum's node groups as Magnum currently stores it.
type NodeGroup struct {
	UUID, Name, Role, Status string
	// StatusReason is returned unchanged when Derive does not move the status.
	StatusReason string
	IsDefault    bool
	// ChartName is the name the chart uses for this group: its MachineDeployment
	// is "<StackID>-<ChartName>" (cut to 63 characters like the chart does) and
	// its Machines carry capi.stackhpc.com/node-group=<ChartName>. Empty means
	// Name.
	ChartName string
	NodeCount int
}

// Config holds the operator-configured timeouts. A zero field takes its value
// from DefaultConfig.
type Config struct {
	UpdateTimeout        time.Duration
	DeleteTimeout        time.Duration
	AddonFailureGrace    time.Duration
	DefaultCreateTimeout time.Duration
}

// Result is what the shim writes back to Magnum's cluster and node groups.
type Result struct {
	Status, StatusReason, APIAddress, COEVersion string
	NodeGroups                                   []NodeGroupResult
	// Rewritten are the controllers' messages the reasons quote in the
	// tenant's words (tenantText), verbatim: for the operator's log, never
	// for Magnum. Filled only when StatusReason changes.
	Rewritten []string `json:",omitempty"`
}

// NodeGroupResult is what the shim writes back to one node group.
type NodeGroupResult struct {
	UUID, Name, Status, StatusReason string
	NodeCount                        int
	NodeAddresses                    []string
	// Destroy: a deleted node group whose machines are gone; the shim deletes
	// its DB row (Magnum no longer does this itself).
	Destroy bool
}

// Health is Magnum's health_status and health_status_reason.
type Health struct {
	Status  string // HEALTHY | UNHEALTHY | UNKNOWN
	Reasons map[string]string
}
