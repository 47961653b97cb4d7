package helmvalues

// The Magnum objects as Magnum's as_dict() renders them: the JSON field names
// are Magnum's field names. Fields Magnum declares nullable are pointers, so
// "not set" and "zero" stay distinct where the mapping cares. Unknown JSON
// fields are ignored: Magnum adds fields between releases.

// ClusterTemplate is magnum.objects.ClusterTemplate.
type ClusterTemplate struct {
	ID                  int               `json:"id,omitempty"`
	UUID                string            `json:"uuid"`
	ProjectID           string            `json:"project_id,omitempty"`
	UserID              string            `json:"user_id,omitempty"`
	Name                string            `json:"name"`
	ImageID             string            `json:"image_id"`
	FlavorID            string            `json:"flavor_id,omitempty"`
	MasterFlavorID      string            `json:"master_flavor_id,omitempty"`
	KeypairID           string            `json:"keypair_id,omitempty"`
	DNSNameserver       string            `json:"dns_nameserver,omitempty"`
	ExternalNetworkID   string            `json:"external_network_id,omitempty"`
	FixedNetwork        string            `json:"fixed_network,omitempty"`
	FixedSubnet         string            `json:"fixed_subnet,omitempty"`
	NetworkDriver       string            `json:"network_driver,omitempty"`
	VolumeDriver        string            `json:"volume_driver,omitempty"`
	APIServerPort       *int              `json:"apiserver_port,omitempty"`
	DockerVolumeSize    *int              `json:"docker_volume_size,omitempty"`
	DockerStorageDriver string            `json:"docker_storage_driver,omitempty"`
	ClusterDistro       string            `json:"cluster_distro,omitempty"`
	COE                 string            `json:"coe,omitempty"`
	HTTPProxy           string            `json:"http_proxy,omitempty"`
	HTTPSProxy          string            `json:"https_proxy,omitempty"`
	NoProxy             string            `json:"no_proxy,omitempty"`
	RegistryEnabled     *bool             `json:"registry_enabled,omitempty"`
	Labels              map[string]string `json:"labels,omitempty"`
	TLSDisabled         *bool             `json:"tls_disabled,omitempty"`
	Public              *bool             `json:"public,omitempty"`
	ServerType          string            `json:"server_type,omitempty"`
	InsecureRegistry    string            `json:"insecure_registry,omitempty"`
	MasterLBEnabled     *bool             `json:"master_lb_enabled,omitempty"`
	FloatingIPEnabled   *bool             `json:"floating_ip_enabled,omitempty"`
	Hidden              *bool             `json:"hidden,omitempty"`
	Tags                string            `json:"tags,omitempty"`
	Driver              string            `json:"driver,omitempty"`
}

// Cluster is magnum.objects.Cluster. MasterCount and NodeCount are properties
// in current Magnum (sums over node groups), not fields; the shim may send them
// and they are only a fallback when the node groups are missing.
type Cluster struct {
	ID                int               `json:"id,omitempty"`
	UUID              string            `json:"uuid"`
	Name              string            `json:"name"`
	ProjectID         string            `json:"project_id"`
	UserID            string            `json:"user_id,omitempty"`
	ClusterTemplateID string            `json:"cluster_template_id,omitempty"`
	StackID           string            `json:"stack_id"`
	Keypair           string            `json:"keypair,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	MasterFlavorID    string            `json:"master_flavor_id,omitempty"`
	FlavorID          string            `json:"flavor_id,omitempty"`
	FixedNetwork      string            `json:"fixed_network,omitempty"`
	FixedSubnet       string            `json:"fixed_subnet,omitempty"`
	FloatingIPEnabled *bool             `json:"floating_ip_enabled,omitempty"`
	MasterLBEnabled   *bool             `json:"master_lb_enabled,omitempty"`
	MasterCount       int               `json:"master_count,omitempty"`
	NodeCount         int               `json:"node_count,omitempty"`
	CreateTimeout     *int              `json:"create_timeout,omitempty"`
	DockerVolumeSize  *int              `json:"docker_volume_size,omitempty"`
	Status            string            `json:"status,omitempty"`
	StatusReason      string            `json:"status_reason,omitempty"`
	HealthStatus      string            `json:"health_status,omitempty"`
	APIAddress        string            `json:"api_address,omitempty"`
	DiscoveryURL      string            `json:"discovery_url,omitempty"`
	COEVersion        string            `json:"coe_version,omitempty"`
	ContainerVersion  string            `json:"container_version,omitempty"`
	CACertRef         string            `json:"ca_cert_ref,omitempty"`
	MagnumCertRef     string            `json:"magnum_cert_ref,omitempty"`
	EtcdCACertRef     string            `json:"etcd_ca_cert_ref,omitempty"`
	FrontProxyCARef   string            `json:"front_proxy_ca_cert_ref,omitempty"`
}

// NodeGroup is magnum.objects.NodeGroup. MinNodeCount is non-nullable with
// default 0 in current Magnum, so 0 usually means "not given".
type NodeGroup struct {
	ID               int               `json:"id,omitempty"`
	UUID             string            `json:"uuid"`
	Name             string            `json:"name"`
	ClusterID        string            `json:"cluster_id"`
	ProjectID        string            `json:"project_id,omitempty"`
	Role             string            `json:"role"`
	FlavorID         string            `json:"flavor_id,omitempty"`
	ImageID          string            `json:"image_id,omitempty"`
	NodeCount        int               `json:"node_count"`
	MinNodeCount     *int              `json:"min_node_count,omitempty"`
	MaxNodeCount     *int              `json:"max_node_count,omitempty"`
	IsDefault        bool              `json:"is_default"`
	Labels           map[string]string `json:"labels,omitempty"`
	NodeLabels       map[string]string `json:"node_labels,omitempty"`
	NodeTaints       []Taint           `json:"node_taints,omitempty"`
	NodeAddresses    []string          `json:"node_addresses,omitempty"`
	DockerVolumeSize *int              `json:"docker_volume_size,omitempty"`
	StackID          string            `json:"stack_id,omitempty"`
	Status           string            `json:"status,omitempty"`
	StatusReason     string            `json:"status_reason,omitempty"`
	Version          string            `json:"version,omitempty"`
}

// Taint is one entry of NodeGroup.node_taints (Magnum API 1.14).
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Image is the Glance image of the cluster template, resolved by the sidecar.
type Image struct {
	ID          string `json:"id"`
	OSDistro    string `json:"os_distro"`
	KubeVersion string `json:"kube_version"`
}

// VolumeType is a Cinder volume type as Cinder's API returns it.
type VolumeType struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	IsPublic    bool              `json:"is_public"`
	Description string            `json:"description,omitempty"`
	ExtraSpecs  map[string]string `json:"extra_specs,omitempty"`
}

// Magnum node group roles and statuses the mapping looks at.
const (
	roleMaster             = "master"
	statusDeleteInProgress = "DELETE_IN_PROGRESS"
	statusDeleteComplete   = "DELETE_COMPLETE"
)
