package helmvalues

import (
	"slices"
	"sort"
)

// scope says where a label is read from.
type scope int

const (
	// scopeCluster: template labels, overridden by cluster labels.
	scopeCluster scope = iota
	// scopeNodeGroup: like scopeCluster, and a node group's own labels
	// override it for that node group.
	scopeNodeGroup
	// scopeTemplate: the cluster template's labels only.
	scopeTemplate
)

func (s scope) String() string {
	switch s {
	case scopeNodeGroup:
		return "template and cluster labels; a node group's own label overrides them for that node group"
	case scopeTemplate:
		return "template labels only"
	}
	return "template and cluster labels"
}

// labelSpec is one entry of the label registry: the single source of the
// parsers, the defaults and docs/labels.md.
type labelSpec struct {
	Name       string
	Group      string
	Type       valueType
	Default    string // built-in default; "" means unset
	DefaultDoc string // how the default is described when it is not a plain value
	Scope      scope
	Keys       []string // chart values written
	Doc        string
	Aliases    []string // deprecated names still read
	Valid      []string // examples that parse (docs, golden tests)
	Invalid    []string // examples that must be refused
	// Sidecar: the sidecar acts on the label (Result carries it), so its
	// examples change no values by themselves.
	Sidecar bool
}

const (
	groupCluster  = "Kubernetes and API server"
	groupNetwork  = "Networking"
	groupMachines = "Machines, volumes and scaling"
	groupAddons   = "Addons and storage"
)

// labelSpecs is the label registry, in documentation order.
var labelSpecs = slices.Concat(coreLabelSpecs, apiServerLabelSpecs)

// coreLabelSpecs are the registry's first groups.
var coreLabelSpecs = []labelSpec{
	{
		Name: "capi_helm_chart_version", Group: groupCluster, Type: semverType, Scope: scopeTemplate,
		DefaultDoc: "sidecar option `chart.version` (" + ChartVersion + ")",
		Keys:       []string{"(chart version installed)"},
		Doc: "Version of the openstack-cluster chart. Read from the template only, so upgrading a cluster to a new " +
			"template moves it to that template's chart; the copy Magnum puts in the cluster's labels at create time " +
			"is ignored (a warning says so when it differs). Values are written for chart " + ChartVersion + "; other " +
			"versions get a warning.",
		Valid: []string{"0.27.0", "0.27.1-rc.1"}, Invalid: []string{"v0.27.0", "latest"},
	},
	{
		Name: "capi_management_cluster", Group: groupCluster, Type: chartNameType, Scope: scopeTemplate,
		DefaultDoc: "sidecar option `defaultManagementCluster`, else the first of `managementClusters`",
		Keys:       []string{"(where the release is installed)"},
		Doc: "Name of the management cluster (an entry of the driver's `managementClusters`) a new cluster is " +
			"created on. Read when the cluster is created: a cluster stays on its management cluster whatever its " +
			"template says later. A name that is not configured is refused.",
		Valid: []string{"default", "region-two"}, Invalid: []string{"{a: b}"},
	},
	{
		Name: ArgoCDRegisterLabel, Group: groupCluster, Type: boolType, Scope: scopeTemplate,
		DefaultDoc: "sidecar option `argocd.registerByDefault` (`true`) when `argocd.enabled`",
		Keys:       []string{"(no chart value: the Argo CD cluster Secret `magnum-<stack_id>`, docs/gitops.md)"},
		Doc: "Register the template's clusters with Argo CD when they reach CREATE_COMPLETE (a cluster Secret in " +
			"the sidecar's `argocd.namespace`, refreshed on updates, removed at delete), or not. Has effect only " +
			"where the site enabled the hand-off (`argocd.enabled`); read from the template, so a cluster follows " +
			"its template, also after an upgrade to another template.",
		Valid: []string{"true", "no"}, Invalid: []string{"argocd"},
	},
	{
		Name: "master_lb_floating_ip_enabled", Group: groupCluster, Type: boolType, Default: "true",
		Keys: []string{"apiServer.associateFloatingIP"},
		Doc: "Give the API server load balancer a floating IP. The template's `floating_ip_enabled` field is " +
			"deliberately not used for this (StackHPC behaviour).",
		Valid: []string{"false", "True"}, Invalid: []string{"maybe"},
	},
	{
		Name: "api_master_lb_allowed_cidrs", Group: groupCluster, Type: listType(",", cidrOrIPType),
		Aliases: []string{"master_lb_allowed_cidrs"},
		Keys:    []string{"apiServer.allowedCIDRs"},
		Doc: "Networks allowed to reach the API server load balancer. A bare IP becomes a /32 (or /128). " +
			"CAPO adds the cluster's own networks itself.",
		Valid: []string{"192.168.0.0/16,203.0.113.7", "2001:db8::/32"}, Invalid: []string{"10.0.0.0/33", "10.0.0.1/24"},
	},
	{
		Name: "octavia_provider", Group: groupCluster, Type: octaviaProviderType, Default: "amphora",
		Keys:  []string{"apiServer.loadBalancerProvider", "addons.openstack.cloudConfig.LoadBalancer.lb-provider"},
		Doc:   "Octavia provider for the API server load balancer and for Services of type LoadBalancer.",
		Valid: []string{"ovn"}, Invalid: []string{"OVN provider"},
	},
	{
		Name: "octavia_lb_algorithm", Group: groupCluster,
		Type:       enumType("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"),
		DefaultDoc: "`SOURCE_IP_PORT` with the `ovn` provider, else `ROUND_ROBIN`",
		Keys:       []string{"addons.openstack.cloudConfig.LoadBalancer.lb-method"},
		Doc:        "Load-balancing algorithm of Services of type LoadBalancer (OVN supports only SOURCE_IP_PORT).",
		Valid:      []string{"least_connections"}, Invalid: []string{"RANDOM"},
	},
	{
		Name: "octavia_lb_healthcheck", Group: groupCluster, Type: boolType, Default: "true",
		Keys:  []string{"addons.openstack.cloudConfig.LoadBalancer.create-monitor"},
		Doc:   "Create Octavia health monitors for Services of type LoadBalancer.",
		Valid: []string{"no"}, Invalid: []string{"2"},
	},
	{
		Name: "api_server_cert_sans", Group: groupCluster, Type: listType(",", certSANType),
		Keys:  []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.certSANs"},
		Doc:   "Extra subject alternative names in the API server certificate.",
		Valid: []string{"api.example.com,*.k8s.example.com,203.0.113.10"}, Invalid: []string{"api_example.com", "a b"},
	},
	{
		Name: "admission_control_list", Group: groupCluster, Type: listType(",", admissionPluginType),
		Keys: []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.enable-admission-plugins"},
		Doc: "Admission plugins enabled in addition to Kubernetes' defaults. Plugin settings go through the " +
			"chart's `apiServer.admissionConfiguration`, which labels do not set.",
		Valid: []string{"NodeRestriction,AlwaysPullImages"}, Invalid: []string{"node-restriction"},
	},
	{
		Name: "audit_log_enabled", Group: groupCluster, Type: boolType, Default: "false",
		Keys: []string{"controlPlane.kubeadmConfigSpec.files", "controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs",
			"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraVolumes"},
		Doc: "Write the API server audit log to /var/log/kubernetes/audit/kube-apiserver-audit.log on the control plane " +
			"nodes, with a policy that records metadata for every request and never request or response bodies.",
		Valid: []string{"true"}, Invalid: []string{"enabled"},
	},
	{
		Name: "audit_log_max_age", Group: groupCluster, Type: intType(0, 3650), Default: "30",
		Keys:  []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.audit-log-maxage"},
		Doc:   "Days to keep rotated audit logs (with audit_log_enabled).",
		Valid: []string{"7"}, Invalid: []string{"-1"},
	},
	{
		Name: "audit_log_max_backup", Group: groupCluster, Type: intType(0, 1000), Default: "10",
		Keys:  []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.audit-log-maxbackup"},
		Doc:   "Rotated audit log files to keep (with audit_log_enabled).",
		Valid: []string{"5"}, Invalid: []string{"five"},
	},
	{
		Name: "audit_log_max_size", Group: groupCluster, Type: intType(1, 100000), Default: "100",
		Keys:  []string{"controlPlane.kubeadmConfigSpec.clusterConfiguration.apiServer.extraArgs.audit-log-maxsize"},
		Doc:   "Size in MiB at which the audit log is rotated (with audit_log_enabled).",
		Valid: []string{"200"}, Invalid: []string{"0"},
	},
	{
		Name: "oidc_issuer_url", Group: groupCluster, Type: httpsURLType,
		Keys:  []string{"oidc.issuerUrl"},
		Doc:   "Enables OpenID Connect authentication: the issuer URL (the discovery URL without /.well-known/openid-configuration). Requires oidc_client_id.",
		Valid: []string{"https://auth.example.com/realms/k8s"}, Invalid: []string{"http://auth.example.com", "https://{{ .Release.Name }}"},
	},
	{
		Name: "oidc_client_id", Group: groupCluster, Type: clientIDType,
		Keys:  []string{"oidc.clientId"},
		Doc:   "Client id that OIDC tokens are issued for.",
		Valid: []string{"kubernetes"}, Invalid: []string{"my client"},
	},
	{
		Name: "oidc_username_claim", Group: groupCluster, Type: claimType, DefaultDoc: "chart default `sub`",
		Keys:  []string{"oidc.usernameClaim"},
		Doc:   "Token claim that holds the user name.",
		Valid: []string{"preferred_username"}, Invalid: []string{"user name"},
	},
	{
		Name: "oidc_username_prefix", Group: groupCluster, Type: prefixType, DefaultDoc: "chart default `oidc:`",
		Keys:  []string{"oidc.usernamePrefix"},
		Doc:   "Prefix added to OIDC user names (`-` disables prefixing).",
		Valid: []string{"-"}, Invalid: []string{"oidc user:"},
	},
	{
		Name: "oidc_groups_claim", Group: groupCluster, Type: claimType, DefaultDoc: "chart default `groups`",
		Keys:  []string{"oidc.groupsClaim"},
		Doc:   "Token claim that holds the user's groups.",
		Valid: []string{"roles"}, Invalid: []string{"{% raw %}"},
	},
	{
		Name: "oidc_groups_prefix", Group: groupCluster, Type: prefixType, DefaultDoc: "chart default `oidc:`",
		Keys:  []string{"oidc.groupsPrefix"},
		Doc:   "Prefix added to OIDC group names.",
		Valid: []string{"sso:"}, Invalid: []string{"a\"b"},
	},
	{
		Name: "oidc_signing_algs", Group: groupCluster, Type: listType(",", signingAlgType), DefaultDoc: "chart default `RS256`",
		Keys:  []string{"oidc.signingAlgs"},
		Doc:   "Accepted token signing algorithms.",
		Valid: []string{"RS256,ES256"}, Invalid: []string{"HS256"},
	},
	{
		Name: "keystone_auth_enabled", Group: groupCluster, Type: boolType, Default: "false",
		Keys: []string{"authWebhook", "addons.openstack.k8sKeystoneAuth"},
		Doc: "Authenticate and authorize Kubernetes users against Keystone (k8s-keystone-auth). Uses the cluster's " +
			"project and the sidecar option `values.keystoneAuthURL`, never the requester's token; fails when that URL is not configured.",
		Valid: []string{"true"}, Invalid: []string{"keystone"},
	},

	{
		Name: "fixed_subnet_cidr", Group: groupNetwork, Type: cidrType, Default: "10.0.0.0/24",
		Keys:  []string{"clusterNetworking.internalNetwork.nodeCidr"},
		Doc:   "CIDR of the network created for the cluster (unused when the cluster has a fixed network or subnet).",
		Valid: []string{"10.10.0.0/22"}, Invalid: []string{"10.10.0.1/22", "10.10.0.0"},
	},
	{
		Name: "extra_network_names", Group: groupNetwork, Type: listType(" ", networkNameType),
		Aliases: []string{"extra_network_name"},
		Keys:    []string{"nodeGroupDefaults.machineNetworking.ports"},
		Doc:     "Neutron networks (by name) attached to worker nodes as extra ports after the cluster network, e.g. for CephFS or storage networks.",
		Valid:   []string{"storage-net ceph-public"}, Invalid: []string{"storage,net"},
	},
	{
		Name: "capi_network_driver", Group: groupNetwork, Type: enumType("calico", "cilium"),
		DefaultDoc: "the template's `network_driver`",
		Keys:       []string{"addons.cni.type"},
		Doc: "The CNI, when the template's `network_driver` cannot name it: Magnum 15 (Zed) accepts only " +
			"`flannel` and `calico` there (HTTP 400 for `cilium`), Magnum 20 and later accept `cilium`. " +
			"Wins over `network_driver`. Cannot change after the cluster exists.",
		Valid: []string{"cilium", "Calico"}, Invalid: []string{"flannel", "weave"},
	},
	{
		Name: "calico_ipv4pool", Group: groupNetwork, Type: cidrType, DefaultDoc: "chart default `172.16.0.0/13`",
		Keys: []string{"kubeNetwork.pods.cidrBlocks"},
		Doc: "Pod network CIDR when the CNI is Calico (network_driver calico, flannel or empty). Cannot change " +
			"after the cluster exists.",
		Valid: []string{"10.100.0.0/16"}, Invalid: []string{"10.100.0.0/33"},
	},
	{
		Name: "cilium_ipv4pool", Group: groupNetwork, Type: cidrType, DefaultDoc: "chart default `172.16.0.0/13`",
		Keys:  []string{"kubeNetwork.pods.cidrBlocks"},
		Doc:   "Pod network CIDR when the CNI is Cilium (network_driver cilium).",
		Valid: []string{"10.200.0.0/16"}, Invalid: []string{"pods"},
	},
	{
		Name: "service_cluster_ip_range", Group: groupNetwork, Type: cidrType, DefaultDoc: "chart default `172.24.0.0/13`",
		Keys:  []string{"kubeNetwork.services.cidrBlocks"},
		Doc:   "Service (cluster IP) network CIDR. Cannot change after the cluster exists.",
		Valid: []string{"10.254.0.0/16"}, Invalid: []string{"10.254.0.1/16"},
	},
	{
		Name: "dns_cluster_domain", Group: groupNetwork, Type: dnsDomainType, DefaultDoc: "chart default `cluster.local`",
		Keys:  []string{"kubeNetwork.serviceDomain"},
		Doc:   "Cluster DNS domain. Cannot change after the cluster exists.",
		Valid: []string{"k8s.example.internal"}, Invalid: []string{"Cluster.Local", "-bad.local"},
	},
	{
		Name: "container_infra_prefix", Group: groupNetwork, Type: registryPrefixType,
		Keys: []string{"registryMirrors"},
		Doc: "Registry mirror for the mirrored registries (sidecar option `values.mirroredRegistries`, by default the " +
			"chart's five: docker.io, ghcr.io, nvcr.io, quay.io, registry.k8s.io). An image `<registry>/<repo>` is " +
			"pulled from `https://<prefix><registry>/<repo>` first, falling back to the upstream registry. This is " +
			"the layout of a pull-through mirror (one project per upstream registry), not the Heat driver's flat " +
			"`<prefix><image>` layout.",
		Valid: []string{"registry.example.com:5000/magnum/", "mirror.example.com"}, Invalid: []string{"https://registry.example.com", "Registry.Example.com"},
	},
	{
		Name: "extra_security_group_rules", Group: groupNetwork, Type: securityGroupRulesType,
		Keys: []string{"clusterNetworking.workerNodesSecurityGroupRules"},
		Doc: "Extra ingress rules for worker nodes, added to the security group Cluster API manages for them: " +
			"`protocol:ports:cidr` items, e.g. `tcp:30000-32767:0.0.0.0/0` opens the NodePorts to the world, " +
			"`udp:53:10.0.0.0/8` one port to a network, `icmp::192.168.0.0/16` ICMP. Only ingress from a network is " +
			"possible (no egress, no remote security groups); rules are named `extra <protocol> <ports> from <cidr>`. " +
			"The control plane gets none: chart " + ChartVersion + " fails to render control plane rules. Changing the " +
			"label updates the rules in place.",
		Valid:   []string{"tcp:30000-32767:0.0.0.0/0,udp:53:10.0.0.0/8", "icmp::192.168.0.0/16", "tcp:443:2001:db8::/32"},
		Invalid: []string{"tcp:0:0.0.0.0/0", "tcp:443", "gre::10.0.0.0/8", "tcp:80-70:10.0.0.0/8", "icmp:8:10.0.0.0/8", "tcp:22:10.0.0.1/8"},
	},
	{
		Name: "cilium_hubble_ui_enabled", Group: groupNetwork, Type: boolType, Default: "false",
		Keys: []string{"addons.cni.cilium.release.values.hubble.enabled", "addons.cni.cilium.release.values.hubble.relay.enabled",
			"addons.cni.cilium.release.values.hubble.ui.enabled"},
		Doc: "Turn on Cilium's Hubble with its relay and UI (VEXXHOST's label), when the CNI is Cilium; with Calico it " +
			"gives a warning and has no effect. The UI is a Service inside the cluster (`kubectl -n kube-system " +
			"port-forward svc/hubble-ui 12000:80`).",
		Valid: []string{"true", "off"}, Invalid: []string{"ui"},
	},

	{
		Name: "availability_zone", Group: groupMachines, Type: chartNameType, Scope: scopeNodeGroup,
		Keys: []string{"nodeGroupDefaults.failureDomain", "nodeGroups[].failureDomain", "controlPlane.failureDomains"},
		Doc: "Nova availability zone of worker nodes; also the control plane's when control_plane_availability_zones " +
			"is not set. A node group's own label overrides it for that group.",
		Valid: []string{"az-1"}, Invalid: []string{"2", "zone: a"},
	},
	{
		Name: "control_plane_availability_zones", Group: groupMachines, Type: listType(",", chartNameType),
		Keys:  []string{"controlPlane.failureDomains", "controlPlane.omitFailureDomain"},
		Doc:   "Availability zones the control plane machines are spread over.",
		Valid: []string{"az-1,az-2,az-3"}, Invalid: []string{"az-1,[az-2]"},
	},
	{
		Name: "boot_volume_size", Group: groupMachines, Type: intType(0, 65536), Scope: scopeNodeGroup,
		Keys: []string{"controlPlane.machineRootVolume.diskSize", "nodeGroupDefaults.machineRootVolume.diskSize", "nodeGroups[].machineRootVolume.diskSize"},
		Doc: "Boot from a Cinder volume of this many GiB; 0 uses the flavor's ephemeral disk. Site default: sidecar " +
			"option `values.labelDefaults` (Magnum's `[cinder] default_boot_volume_size`).",
		Valid: []string{"50", "0"}, Invalid: []string{"50GB", "-5"},
	},
	{
		Name: "boot_volume_type", Group: groupMachines, Type: chartNameType, Scope: scopeNodeGroup,
		Keys: []string{"controlPlane.machineRootVolume.volumeType", "nodeGroupDefaults.machineRootVolume.volumeType", "nodeGroups[].machineRootVolume.volumeType"},
		Doc: "Cinder volume type of boot volumes (only used with boot_volume_size > 0). Must be one of the project's " +
			"volume types when the sidecar lists them. Site default: sidecar option `values.labelDefaults` " +
			"(Magnum's `[cinder] default_boot_volume_type`).",
		Valid: []string{"ssd"}, Invalid: []string{"ssd # fast"},
	},
	{
		Name: "boot_volume_availability_zone", Group: groupMachines, Type: chartNameType, Scope: scopeNodeGroup,
		Keys:  []string{"controlPlane.machineRootVolume.availabilityZone", "nodeGroupDefaults.machineRootVolume.availabilityZone", "nodeGroups[].machineRootVolume.availabilityZone"},
		Doc:   "Cinder availability zone of boot volumes; by default the machine's zone.",
		Valid: []string{"nova"}, Invalid: []string{"true"},
	},
	{
		Name: "docker_volume_type", Group: groupMachines, Type: chartNameType, Scope: scopeNodeGroup,
		Keys: []string{"nodeGroups[].additionalBlockDevices.containerd.volumeType"},
		Doc: "Cinder volume type of the containerd volume of worker nodes (Magnum's docker_volume_size field; see " +
			"\"Magnum fields\" below). Must be one of the project's volume types when the sidecar lists them.",
		Valid: []string{"ssd"}, Invalid: []string{"[ssd]", "no"},
	},
	{
		Name: "server_group_id", Group: groupMachines, Type: idType, Scope: scopeNodeGroup,
		Keys: []string{"nodeGroupDefaults.serverGroupId", "nodeGroups[].serverGroupId"},
		Doc: "Existing Nova server group for worker nodes, used instead of the groups the driver creates " +
			"(server_group_policies); a node group's own label overrides it for that group.",
		Valid: []string{"3c1b5e3e-7e9f-4a55-9a0e-2f0c1a6b8d11"}, Invalid: []string{"my group"},
	},
	{
		Name: "control_plane_server_group_id", Group: groupMachines, Type: idType,
		Keys: []string{"controlPlane.serverGroupId"},
		Doc: "Existing Nova server group for control plane nodes, used instead of the group the driver creates " +
			"(server_group_policies).",
		Valid: []string{"0f5d6c1e-2b4a-4f0e-9a51-7d3c9e2b1a00"}, Invalid: []string{"12"},
	},
	{
		Name: "server_group_policies", Group: groupMachines,
		Type:    enumType("soft-anti-affinity", "anti-affinity", "affinity", "soft-affinity"),
		Default: DefaultServerGroupPolicy, Sidecar: true,
		Keys: []string{"(server groups the sidecar makes; their ids go to controlPlane.serverGroupId and nodeGroups[].serverGroupId)"},
		Doc: "Policy of the Nova server groups the driver creates (VEXXHOST's label): one for the control plane " +
			"(`<stack_id>-control-plane`) and one per worker node group (`<stack_id>-<node group>`, its " +
			"MachineDeployment's name), made when the cluster or the node group is created and deleted with it. " +
			"The soft policies are best effort; `anti-affinity` refuses to boot a machine when no host is left. " +
			"A group named by control_plane_server_group_id or server_group_id is used instead and never " +
			"created or deleted. Read when a group is made: an existing group keeps its policy, and a cluster made " +
			"before the driver created groups gets none later (that would replace every machine; see configuration.md).",
		Valid: []string{"anti-affinity", "Soft-Affinity"}, Invalid: []string{"anti_affinity", "anti-affinity,affinity"},
	},
	{
		Name: "node_labels", Group: groupMachines, Type: nodeLabelsType, Scope: scopeNodeGroup,
		Keys: []string{"nodeGroups[].nodeLabels"},
		Doc: "Kubernetes labels on the nodes of worker node groups, for Magnum releases before 23 whose node groups " +
			"have no node_labels field: `key=value` pairs separated by commas (give several with repeated " +
			"`--labels node_labels=key=value`, which magnumclient joins with commas). A node group's own label " +
			"replaces the cluster's; on Magnum 23 a node group's node_labels field overrides it key by key. " +
			"Labels kubelet refuses to set on itself (kubernetes.io and k8s.io namespaces other than " +
			"node.kubernetes.io, kubelet.kubernetes.io and the well-known keys, so also node-role.kubernetes.io) and " +
			"`capi.stackhpc.com/` labels are refused. Not applied to the control plane.",
		Valid:   []string{"gpu=true", "node.kubernetes.io/pool=batch,tier=", "example.com/team=ml,disk=ssd"},
		Invalid: []string{"gpu", "node-role.kubernetes.io/worker=", "a b=c", "tier=x,tier=y", "capi.stackhpc.com/node-group=x"},
	},
	{
		Name: "node_taints", Group: groupMachines, Type: nodeTaintsType, Scope: scopeNodeGroup,
		Keys: []string{"nodeGroups[].kubeadmConfigSpec.joinConfiguration.nodeRegistration.taints"},
		Doc: "Kubernetes taints registered by the nodes of worker node groups, for Magnum releases before 23: " +
			"`key[=value]:Effect` separated by commas, Effect one of NoSchedule, PreferNoSchedule, NoExecute. A node " +
			"group's own label replaces the cluster's; on Magnum 23 a taint of a node group's node_taints field " +
			"replaces the label's taint of the same key and effect. Not applied to the control plane.",
		Valid:   []string{"dedicated=gpu:NoSchedule", "spot:PreferNoSchedule,example.com/maintenance=yes:NoExecute"},
		Invalid: []string{"dedicated=gpu", "dedicated=gpu:Never", "a b:NoSchedule", "x:NoSchedule,x=y:NoSchedule"},
	},
	{
		Name: "kubelet_extra_args", Group: groupMachines, Type: kubeletArgsType, Scope: scopeNodeGroup,
		Keys: []string{"controlPlane.kubeadmConfigSpec.initConfiguration.nodeRegistration.kubeletExtraArgs",
			"controlPlane.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs",
			"nodeGroupDefaults.kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs",
			"nodeGroups[].kubeadmConfigSpec.joinConfiguration.nodeRegistration.kubeletExtraArgs"},
		Doc: "Kubelet flags, from an allowlist of flags safe for a cluster's owner to set, each value checked: " +
			"`flag=value` items separated by commas (give several with repeated `--labels kubelet_extra_args=...`, " +
			"which magnumclient joins with commas). A flag whose value is a list or map takes the items after it, " +
			"e.g. `kube-reserved=cpu=200m,memory=1Gi,eviction-hard=memory.available<500Mi,nodefs.available<10%`. " +
			"The cluster's label applies to the control plane and every worker node group; a node group's own " +
			"label overrides it flag by flag for that group. Any other flag is refused, naming it, and so are " +
			"combinations kubelet will not start with (image-gc-low-threshold not below image-gc-high-threshold, " +
			"an eviction-soft signal without an eviction-soft-grace-period, max-parallel-image-pulls above 1 " +
			"without serialize-image-pulls=false, cpu-manager-policy=static without reserved cpu). A change rolls " +
			"the node group's machines. The allowed flags:\n\n" + kubeletFlagsDoc(),
		Valid: []string{"max-pods=200", "--max-pods=150,kube-reserved=cpu=200m,memory=1Gi,eviction-hard=memory.available<500Mi,nodefs.available<10%",
			"eviction-soft=memory.available<1Gi,eviction-soft-grace-period=memory.available=1m30s,container-log-max-size=50Mi,container-log-max-files=3"},
		Invalid: []string{"max-pods=5000", "feature-gates=AllAlpha=true", "root-dir=/tmp", "kube-reserved=gpu=1",
			"eviction-hard=memory.free<1Gi", "max-pods", "max-pods=10,max-pods=20", "serialize-image-pulls=yes"},
	},
	{
		Name: "etcd_blockdevice_size", Group: groupMachines, Type: intType(0, 16384), Default: "0",
		Aliases: []string{"etcd_volume_size"},
		Keys:    []string{"etcd.blockDevice.size"},
		Doc:     "Put etcd on a separate block device of this many GiB; 0 keeps it on the root disk.",
		Valid:   []string{"20"}, Invalid: []string{"20Gi"},
	},
	{
		Name: "etcd_blockdevice_type", Group: groupMachines, Type: enumType("volume", "local"), Default: "volume",
		Keys:  []string{"etcd.blockDevice.type"},
		Doc:   "`volume` (Cinder) or `local` (ephemeral disk of the flavor) for the etcd block device.",
		Valid: []string{"Local"}, Invalid: []string{"ceph"},
	},
	{
		Name: "etcd_blockdevice_volume_type", Group: groupMachines, Type: chartNameType,
		Aliases: []string{"etcd_volume_type"},
		Keys:    []string{"etcd.blockDevice.volumeType"},
		Doc:     "Cinder volume type of the etcd volume.",
		Valid:   []string{"fast-ssd"}, Invalid: []string{"{{ lookup }}"},
	},
	{
		Name: "etcd_blockdevice_volume_az", Group: groupMachines, Type: chartNameType,
		Keys:  []string{"etcd.blockDevice.availabilityZone"},
		Doc:   "Cinder availability zone of the etcd volume.",
		Valid: []string{"nova"}, Invalid: []string{"null"},
	},
	{
		Name: "auto_healing_enabled", Group: groupMachines, Type: boolType, Default: "true",
		Keys:  []string{"controlPlane.healthCheck.enabled", "nodeGroupDefaults.healthCheck.enabled"},
		Doc:   "Replace unhealthy machines (Cluster API MachineHealthChecks).",
		Valid: []string{"off"}, Invalid: []string{"sometimes"},
	},
	{
		Name: "auto_scaling_enabled", Group: groupMachines, Type: boolType, Default: "false",
		Keys: []string{"nodeGroups[].autoscale", "nodeGroups[].machineCountMin", "nodeGroups[].machineCountMax"},
		Doc: "Let the cluster autoscaler size worker node groups between their minimum and maximum node counts " +
			"(see \"Autoscaling\" below).",
		Valid: []string{"yes"}, Invalid: []string{"auto"},
	},
	{
		Name: "min_node_count", Group: groupMachines, Type: intType(0, 1000),
		Keys: []string{"nodeGroups[].machineCountMin"},
		Doc: "Autoscaling minimum of the default worker node group (other groups use their own min_node_count). " +
			"0 lets the group scale from zero (see \"Scale from zero\" below).",
		Valid: []string{"2"}, Invalid: []string{"1.5"},
	},
	{
		Name: "max_node_count", Group: groupMachines, Type: intType(1, 1000),
		Keys:  []string{"nodeGroups[].machineCountMax"},
		Doc:   "Autoscaling maximum of the default worker node group (other groups use their own max_node_count).",
		Valid: []string{"10"}, Invalid: []string{"0"},
	},

	{
		Name: "monitoring_enabled", Group: groupAddons, Type: boolType, Default: "false",
		Keys:  []string{"addons.monitoring.enabled"},
		Doc:   "Install kube-prometheus-stack, Loki and the blackbox exporter in the cluster.",
		Valid: []string{"1"}, Invalid: []string{"prometheus"},
	},
	{
		Name: "ingress_controller", Group: groupAddons, Type: enumType("traefik", "nginx"),
		Keys: []string{"addons.ingress.enabled", "addons.ingress.traefik.enabled", "addons.ingress.nginx.enabled"},
		Doc: "Install an ingress controller. Unset means none. `nginx` (ingress-nginx) is retired upstream and " +
			"gives a warning. The controller's Service creates an Octavia load balancer that deleting the cluster " +
			"only removes when cluster-api-janitor-openstack runs.",
		Valid: []string{"traefik", "NGINX"}, Invalid: []string{"octavia"},
	},
	{
		Name: "cinder_csi_enabled", Group: groupAddons, Type: boolType, Default: "true",
		Keys:  []string{"addons.openstack.csiCinder.enabled"},
		Doc:   "Install the Cinder CSI driver and one StorageClass per Cinder volume type.",
		Valid: []string{"false"}, Invalid: []string{"cinder"},
	},
	{
		Name: "csi_cinder_availability_zone", Group: groupAddons, Type: chartNameType, Default: "nova",
		Keys:  []string{"addons.openstack.csiCinder.defaultStorageClass.availabilityZone", "addons.openstack.csiCinder.additionalStorageClasses[].availabilityZone"},
		Doc:   "Cinder availability zone of volumes created through the StorageClasses.",
		Valid: []string{"az-1"}, Invalid: []string{"yes"},
	},
	{
		Name: "csi_cinder_reclaim_policy", Group: groupAddons, Type: enumType("Retain", "Delete"), Default: "Retain",
		Keys: []string{"addons.openstack.csiCinder.defaultStorageClass.reclaimPolicy", "addons.openstack.csiCinder.additionalStorageClasses[].reclaimPolicy"},
		Doc: "Reclaim policy of the StorageClasses. The default `Retain` (StackHPC's) keeps volumes after their " +
			"claim is deleted; StorageClasses are immutable, so changing it on an existing cluster fails.",
		Valid: []string{"delete"}, Invalid: []string{"Recycle"},
	},
	{
		Name: "csi_cinder_volume_binding_mode", Group: groupAddons, Type: enumType("WaitForFirstConsumer", "Immediate"), Default: "WaitForFirstConsumer",
		Keys:  []string{"addons.openstack.csiCinder.defaultStorageClass.volumeBindingMode", "addons.openstack.csiCinder.additionalStorageClasses[].volumeBindingMode"},
		Doc:   "Volume binding mode of the StorageClasses (immutable once created).",
		Valid: []string{"immediate"}, Invalid: []string{"Later"},
	},
	{
		Name: "csi_cinder_fstype", Group: groupAddons, Type: fstypeType, Default: "ext4",
		Keys:  []string{"addons.openstack.csiCinder.defaultStorageClass.fstype", "addons.openstack.csiCinder.additionalStorageClasses[].fstype"},
		Doc:   "Filesystem of volumes created through the StorageClasses.",
		Valid: []string{"xfs"}, Invalid: []string{"ext4;rm"},
	},
	{
		Name: "csi_cinder_allow_volume_expansion", Group: groupAddons, Type: boolType, Default: "true",
		Keys:  []string{"addons.openstack.csiCinder.defaultStorageClass.allowVolumeExpansion", "addons.openstack.csiCinder.additionalStorageClasses[].allowVolumeExpansion"},
		Doc:   "Allow persistent volume claims to grow.",
		Valid: []string{"false"}, Invalid: []string{"grow"},
	},
	{
		Name: "manila_csi_enabled", Group: groupAddons, Type: boolType, Default: "false",
		Keys: []string{"addons.openstack.csiManila.enabled", "addons.csi.cephfs.enabled", "addons.custom.csi-nfs"},
		Doc: "Install the Manila CSI driver, the node plugin of its share protocol (manila_csi_share_protocol) and a " +
			"`csi-manila` StorageClass.",
		Valid: []string{"true"}, Invalid: []string{"nfs"},
	},
	{
		Name: "manila_csi_share_protocol", Group: groupAddons, Type: enumType("cephfs", "nfs"),
		DefaultDoc: "`nfs` when manila_csi_share_network_id is given, else `cephfs`",
		Keys: []string{"addons.csi.cephfs.enabled", "addons.custom.csi-nfs", "addons.openstack.csiManila.values.shareProtocols",
			"addons.openstack.csiManila.defaultStorageClass.provisioner"},
		Doc: "Protocol of the shares of the `csi-manila` StorageClass (with manila_csi_enabled). `cephfs`: native " +
			"CephFS shares, mounted by the chart's CephFS node plugin (ceph-csi-cephfs). `nfs`: NFS shares, mounted by " +
			"csi-driver-nfs, which the driver installs as a custom addon of the chart (HelmRelease `<stack_id>-csi-nfs`, " +
			"namespace `" + csiNFSNamespace + "`, chart " + "csi-driver-nfs " + csiNFSChartVersion + "); it needs " +
			"manila_csi_share_type, and a cluster without one is refused. StorageClasses are immutable, so changing the " +
			"protocol of an existing cluster fails in its csi-manila-storageclass addon.",
		Valid: []string{"NFS"}, Invalid: []string{"cifs"},
	},
	{
		Name: "manila_csi_share_type", Group: groupAddons, Type: chartNameType, DefaultDoc: "chart default `cephfs` for CephFS; required for NFS",
		Keys:  []string{"addons.openstack.csiManila.defaultStorageClass.parameters.type"},
		Doc:   "Manila share type of the `csi-manila` StorageClass (with manila_csi_enabled).",
		Valid: []string{"cephfsnative1"}, Invalid: []string{"a, b"},
	},
	{
		Name: "manila_csi_share_network_id", Group: groupAddons, Type: idType,
		Keys: []string{"addons.openstack.csiManila.defaultStorageClass.parameters.shareNetworkID"},
		Doc: "Manila share network of the `csi-manila` StorageClass (with manila_csi_enabled; VEXXHOST's label), for " +
			"share types that create share servers (driver_handles_share_servers). Implies NFS shares unless " +
			"manila_csi_share_protocol says otherwise.",
		Valid: []string{"0b3c1c9e-5f1a-4d2b-8c7e-3a9f6e2d1b40"}, Invalid: []string{"share net"},
	},
	{
		Name: "nvidia_gpu_operator_enabled", Group: groupAddons, Type: boolType, DefaultDoc: "chart default `true`",
		Keys: []string{"addons.nvidiaGPUOperator.enabled"},
		Doc: "Install NVIDIA's GPU operator, which runs its drivers and device plugin only on nodes with an NVIDIA " +
			"GPU (node feature discovery finds them). `false` leaves it out, e.g. in a template for clusters without GPUs.",
		Valid: []string{"false"}, Invalid: []string{"nvidia"},
	},
	{
		Name: "amd_gpu_operator_enabled", Group: groupAddons, Type: boolType, DefaultDoc: "chart default `false`",
		Keys:  []string{"addons.amdGPUOperator.enabled"},
		Doc:   "Install AMD's GPU operator for nodes with AMD GPUs.",
		Valid: []string{"true"}, Invalid: []string{"rocm"},
	},
}

// ignoredLabels are well-known labels of Magnum's Heat driver, the StackHPC
// driver or the VEXXHOST driver that have no effect with this driver. They
// give a warning saying why, even with values.strictLabels, because templates carry
// them for years.
var ignoredLabels = map[string]string{
	"kube_tag":                         "the Kubernetes version comes from the image's kube_version property",
	"kube_dashboard_enabled":           "chart 0.20 and later has no dashboard addon",
	"kube_dashboard_version":           "chart 0.20 and later has no dashboard addon",
	"influx_grafana_dashboard_enabled": "the monitoring addon (monitoring_enabled) includes Grafana",
	"prometheus_monitoring":            "use monitoring_enabled",
	"grafana_admin_passwd":             "the monitoring addon manages Grafana's credentials",
	"metrics_server_enabled":           "the chart always installs metrics-server",
	"metrics_server_chart_tag":         "addon versions are pinned by the chart version",
	"container_runtime":                "the chart always uses containerd",
	"containerd_version":               "containerd comes with the image",
	"containerd_tarball_url":           "containerd comes with the image",
	"containerd_tarball_sha256":        "containerd comes with the image",
	"cgroup_driver":                    "kubeadm and the image decide the cgroup driver",
	"use_podman":                       "the chart does not use podman",
	"selinux_mode":                     "the image decides SELinux settings",
	"etcd_tag":                         "kubeadm runs the etcd matching the Kubernetes version",
	"coredns_tag":                      "kubeadm runs the CoreDNS matching the Kubernetes version",
	"flannel_tag":                      "flannel is not available; the CNI is Calico or Cilium",
	"flannel_backend":                  "flannel is not available; the CNI is Calico or Cilium",
	"flannel_network_cidr":             "flannel is not available; use calico_ipv4pool",
	"flannel_network_subnetlen":        "flannel is not available",
	"calico_tag":                       "addon versions are pinned by the chart version",
	"calico_kube_controllers_tag":      "addon versions are pinned by the chart version",
	"cilium_tag":                       "addon versions are pinned by the chart version",
	"cloud_provider_tag":               "addon versions are pinned by the chart version",
	"cloud_provider_enabled":           "the OpenStack cloud controller manager is always installed",
	"cinder_csi_plugin_tag":            "addon versions are pinned by the chart version",
	"manila_csi_plugin_tag":            "addon versions are pinned by the chart version",
	"k8s_keystone_auth_tag":            "addon versions are pinned by the chart version",
	"heat_container_agent_tag":         "there is no Heat stack",
	"hyperkube_prefix":                 "kubeadm clusters do not use hyperkube",
	"kubelet_options":                  "free-form component flags are not supported; see kubelet_extra_args",
	"kubeapi_options":                  "free-form component flags are not supported",
	"kubecontroller_options":           "free-form component flags are not supported",
	"kubescheduler_options":            "free-form component flags are not supported",
	"kubeproxy_options":                "free-form component flags are not supported",
	"tiller_enabled":                   "Helm 2 is gone",
	"tiller_tag":                       "Helm 2 is gone",
	"helm_client_tag":                  "there is no in-cluster Helm client",
	"auto_healing_controller":          "auto healing is Cluster API's MachineHealthCheck (auto_healing_enabled)",
	"magnum_auto_healer_tag":           "auto healing is Cluster API's MachineHealthCheck (auto_healing_enabled)",
	"autoscaler_tag":                   "the chart pins the cluster autoscaler",
	"draino_tag":                       "not used with Cluster API",
	"npd_enabled":                      "the chart always installs node-problem-detector",
	"node_problem_detector_tag":        "addon versions are pinned by the chart version",
	"nginx_ingress_controller_tag":     "addon versions are pinned by the chart version",
	"traefik_ingress_controller_tag":   "addon versions are pinned by the chart version",
	"octavia_ingress_controller_tag":   "the Octavia ingress controller is not available; see ingress_controller",
	"ingress_controller_role":          "the ingress controller runs on any worker",
	"cert_manager_api":                 "not used with Cluster API",
	"csi_snapshotter_tag":              "addon versions are pinned by the chart version",
	"csi_attacher_tag":                 "addon versions are pinned by the chart version",
	"csi_provisioner_tag":              "addon versions are pinned by the chart version",
	"csi_resizer_tag":                  "addon versions are pinned by the chart version",
	"csi_node_driver_registrar_tag":    "addon versions are pinned by the chart version",
	"csi_liveness_probe_tag":           "addon versions are pinned by the chart version",
	"hw_disk_bus":                      "set hw_disk_bus as an image property",
	"different_failure_domain":         "use availability_zone and control_plane_availability_zones",
}

// labelRegistry and labelAliases index labelSpecs.
var (
	labelRegistry = map[string]*labelSpec{}
	labelAliases  = map[string]string{} // alias → canonical name
)

func init() {
	for i := range labelSpecs {
		spec := &labelSpecs[i]
		labelRegistry[spec.Name] = spec
		for _, alias := range spec.Aliases {
			labelAliases[alias] = spec.Name
		}
	}
}

// labelNames returns the registered label names in documentation order.
func labelNames() []string {
	names := make([]string, len(labelSpecs))
	for i, spec := range labelSpecs {
		names[i] = spec.Name
	}
	return names
}

func sortedIgnoredLabels() []string {
	names := make([]string, 0, len(ignoredLabels))
	for name := range ignoredLabels {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
