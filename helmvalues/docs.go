package helmvalues

import (
	"bytes"
	"fmt"
	"strings"
)

// fieldDoc documents how one Magnum field or OpenStack fact is mapped.
type fieldDoc struct {
	Field, Keys, Notes string
}

// fieldDocs is the mapping of everything that is not a label, for
// docs/labels.md.
var fieldDocs = []fieldDoc{
	{"cluster.stack_id", "release name, `cloudCredentialsSecretName` (`<stack_id>-cloud-credentials`)", "Required; generated once at create (ReleaseName), StackHPC-compatible."},
	{"image.id (the template's image_id, resolved)", "`machineImageId`", "Required."},
	{"image property kube_version", "`kubernetesVersion`", "Required; a leading `v` is dropped. The `kube_tag` label is not used."},
	{"image property os_distro", "`osDistro`", "Required, lowercased; `flatcar` switches the chart to Ignition; `ubuntu`, `debian`, `rocky` and any other name bootstrap with cloud-init."},
	{"docker_volume_size of a worker node group, else of the cluster, else of the template", "`nodeGroups[].additionalBlockDevices.containerd`, `nodeGroups[].kubeadmConfigSpec.diskSetup`, `mounts`", "A Cinder volume of that many GiB per worker node (label docker_volume_type: its type), formatted ext4 and mounted on /var/lib/containerd, which holds the images and containers' writable layers; 0 or unset: none. Not for the control plane. A change rolls the node group's machines; a node group deployed without one (made before the driver mapped docker_volume_size, or adopted from the StackHPC driver, which ignores it) keeps none, so updates do not roll it."},
	{"cluster.keypair, else cluster_template.keypair_id", "`machineSSHKeyName`", "Plain name (see above)."},
	{"cluster_template.network_driver", "`addons.cni.type`", "`calico` or `cilium`; `flannel` (Magnum's default) or empty give the chart default, Calico, with a warning; anything else is an error."},
	{"cluster_template.external_network_id (resolved)", "`clusterNetworking.externalNetworkId`", "The driver resolves a name; an unresolved value must be a UUID."},
	{"cluster.fixed_network, else cluster_template.fixed_network (resolved)", "`clusterNetworking.internalNetwork.networkFilter.id`", "As above."},
	{"cluster.fixed_subnet, else cluster_template.fixed_subnet (resolved)", "`clusterNetworking.internalNetwork.subnetFilter.id`", "As above."},
	{"cluster_template.dns_nameserver", "`clusterNetworking.internalNetwork.dnsNameservers`", "Comma-separated IP addresses; only used for a network the cluster creates."},
	{"cluster_template.apiserver_port", "`apiServer.port`", "1–65535; not sent when unset (chart default 6443)."},
	{"cluster_template.http_proxy, https_proxy, no_proxy", "`controlPlane.kubeadmConfigSpec`, `nodeGroupDefaults.kubeadmConfigSpec` (`files`, `preKubeadmCommands`)", "A containerd systemd drop-in so images are pulled through the proxy. NO_PROXY always adds localhost, `.svc`, the cluster domain and the pod, service and node networks."},
	{"master node group: node_count (else cluster.master_count)", "`controlPlane.machineCount`", "1–99; an even count gives a warning."},
	{"master node group: flavor_id, else cluster.master_flavor_id, else cluster_template.master_flavor_id", "`controlPlane.machineFlavor`", "Plain name."},
	{"master node group: node_labels, node_taints", "`controlPlane.nodeLabels`, `controlPlane.kubeadmConfigSpec.{init,join}Configuration.nodeRegistration.taints`", "With taints, kubeadm's own control-plane NoSchedule taint is kept. Magnum 23's API refuses both on master node groups; the node_labels and node_taints labels never reach the control plane."},
	{"worker node groups (role other than master)", "`nodeGroups[]`", "Always sent, even empty (the chart's default list has a node group of its own). Sorted by chart name. Node groups in DELETE_IN_PROGRESS or DELETE_COMPLETE are left out."},
	{"node group name", "`nodeGroups[].name`", "StackHPC's sanitized name when valid for the chart and `<release>-<name>` fits in 63 characters, else a shortened name with a hash suffix (a warning says so). Two node groups with the same chart name are an error."},
	{"node group flavor_id, else cluster.flavor_id, else cluster_template.flavor_id", "`nodeGroups[].machineFlavor`", "Plain name."},
	{"node group node_count", "`nodeGroups[].machineCount`", "0–1000."},
	{"worker node group image_id, when not the template's (resolved)", "`nodeGroups[].machineImageId`, `nodeGroups[].kubernetesVersion`", "A node group upgraded on its own (`openstack coe cluster upgrade --nodegroup`) or created with its own image keeps them on every later update. Its image must have the cluster's os_distro and a kube_version not newer than the control plane's minor version and at most three minors older."},
	{"node group min_node_count, max_node_count", "`nodeGroups[].autoscale`, `machineCountMin`, `machineCountMax`", "With auto_scaling_enabled; see Autoscaling."},
	{"node group node_labels (Magnum ≥ 23, API 1.14)", "`nodeGroups[].nodeLabels` (the chart adds them to kubelet's `--node-labels`)", "Kubernetes label syntax; labels kubelet may not set on itself (kubernetes.io and k8s.io namespaces other than node.kubernetes.io, kubelet.kubernetes.io and the well-known keys, so also node-role.kubernetes.io) and `capi.stackhpc.com/` labels are refused. Overrides the node_labels label key by key."},
	{"node group node_taints (Magnum ≥ 23, API 1.14)", "`nodeGroups[].kubeadmConfigSpec.joinConfiguration.nodeRegistration.taints`", "Key and value in Kubernetes label syntax, effect NoSchedule, PreferNoSchedule or NoExecute, each key and effect once. Added to the node_taints label's taints, replacing one of the same key and effect."},
	{"Cinder volume types of the project", "`addons.openstack.csiCinder.defaultStorageClass`, `additionalStorageClasses`", "One StorageClass per type, named by the sanitized type name; the default is the sidecar option `values.csiCinderDefaultVolumeType`, else the first type listed. Types whose names are not plain names are skipped with a warning."},
	{"sidecar option `values.csiCinderAllowedTopologies`", "`addons.openstack.csiCinder.defaultStorageClass.allowedTopologies`", "Availability zones (`topology.cinder.csi.openstack.org/zone`) the default StorageClass provisions in; chart " + ChartVersion + " cannot render them in additional StorageClasses, which stay unlimited (a warning says so)."},
	{"cluster.project_id", "`addons.openstack.k8sKeystoneAuth.values.projectId`", "With keystone_auth_enabled."},
	{"sidecar option `values.keystoneAuthURL`", "`addons.openstack.k8sKeystoneAuth.values.openstackAuthUrl`", "Required with keystone_auth_enabled."},
	{"sidecar options `values.registryMirrors`, `values.keepChartRegistryMirrors`", "`registryMirrors`", "See Registry mirrors."},
	{"sidecar option `values.trustedCAs`", "`trustedCAs`", "PEM certificates added to every node's trust store."},
}

// notMapped lists Magnum fields deliberately not mapped.
var notMapped = []fieldDoc{
	{"cluster_template.master_lb_enabled, cluster.master_lb_enabled", "", "The API server always has a load balancer (`apiServer.enableLoadBalancer: true`): without one the control plane cannot be resized or upgraded."},
	{"cluster_template.floating_ip_enabled, cluster.floating_ip_enabled", "", "Not used for the API server's floating IP (use master_lb_floating_ip_enabled), as in the StackHPC driver; a warning says so when it is false. Nodes never get floating IPs."},
	{"docker_storage_driver, volume_driver", "", "containerd's storage is the image's; persistent volumes come from Cinder CSI (cinder_csi_enabled)."},
	{"node group image_id", "", "Every machine uses the template's image, whose kube_version is the cluster's version."},
	{"insecure_registry, registry_enabled, tls_disabled", "", "Not supported with Cluster API."},
	{"cluster.create_timeout", "", "Not a chart value."},
}

// LabelsMarkdown renders docs/labels.md from the label registry.
func LabelsMarkdown() []byte {
	var w bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&w, format, args...) }
	p("# Labels and fields\n\n")
	p("<!-- Generated from helmvalues/labels.go and helmvalues/docs.go by `go generate ./helmvalues`; do not edit. -->\n\n")
	p("How the Cluster API driver turns a Magnum cluster into values of the openstack-cluster chart %s.\n\n", ChartVersion)
	p("## How labels are read\n\n")
	p("- **Precedence:** the sidecar's site default (`values.labelDefaults`) < cluster template label < cluster label. ")
	p("Magnum copies the template's labels into the cluster's at create time, so on an upgrade the cluster's own copies still win.\n")
	p("- **Node group labels** override the labels marked *node group* for that node group only. Magnum copies the cluster's labels into its default node groups; a node group value equal to the cluster's is no override. Other labels on node groups are not read.\n")
	p("- **Empty values** mean \"not given here\" and fall through to the next level.\n")
	p("- **Every label has a type.** A value that does not parse is an error naming the label, the value and what is expected; it is never silently replaced by a default. All problems of one request are reported together.\n")
	p("- **Values are data.** No label value may contain `{{`, `{%%` or `{#` or control characters: the chart runs Helm's `tpl` on some values and the addon provider renders addon values as Jinja2.\n")
	p("- **Plain names.** Values the chart writes unquoted into its templates (flavors, keypairs, availability zones, volume types, ids) must read back from YAML as the same string: no quotes, braces, brackets, `,` `#` `%%` `&` `*` `!` `|` `>` `\\`, no surrounding spaces, and nothing YAML reads as a number, boolean or null (a flavor id `2` or an availability zone `yes` is refused).\n")
	p("- **Unknown labels** give a warning and are ignored (a near miss of a label below is named: `did you mean boot_volume_size?`); with the sidecar option `values.strictLabels` they are errors. Well-known labels of other Magnum drivers that have no effect here are listed below and always only warn. The user sees these warnings in the cluster's `status_reason` (`openstack coe cluster show`) while it is created or updated, after what Cluster API is doing: `... (labels: label boot_volume_sise is not known to this driver and is ignored (did you mean boot_volume_size?))`.\n\n")

	group := ""
	for _, spec := range labelSpecs {
		if spec.Group != group {
			group = spec.Group
			p("## %s\n\n", group)
		}
		p("### `%s`\n\n", spec.Name)
		p("%s\n\n", spec.Doc)
		p("- Type: %s\n", spec.Type.Doc)
		switch {
		case spec.DefaultDoc != "":
			p("- Default: %s\n", spec.DefaultDoc)
		case spec.Default != "":
			p("- Default: `%s`\n", spec.Default)
		default:
			p("- Default: unset\n")
		}
		p("- Read from: %s\n", spec.Scope)
		keys := make([]string, len(spec.Keys))
		for i, k := range spec.Keys {
			keys[i] = "`" + k + "`"
		}
		p("- Chart values: %s\n", strings.Join(keys, ", "))
		if len(spec.Aliases) > 0 {
			p("- Deprecated names: %s\n", backquoteAll(spec.Aliases))
		}
		p("- Examples: %s; refused: %s\n\n", backquoteAll(spec.Valid), backquoteAll(spec.Invalid))
	}

	autoscalingMarkdown(p)

	p("## Registry mirrors\n\n")
	p("The chart's default mirrors are Azimuth's copies of docker.io, ghcr.io, nvcr.io, quay.io and registry.k8s.io on quay.io. The driver removes them (`registryMirrors: null`) unless mirrors are configured (`values.registryMirrors`, or the label `container_infra_prefix`) or the sidecar option `values.keepChartRegistryMirrors` is set; ")
	p("chart registries without a mirror of ours are removed one by one. Adopted StackHPC clusters used the chart's mirrors, so their nodes roll once when the driver first upgrades them, unless the operator keeps the chart's mirrors.\n\n")

	p("## Magnum fields and OpenStack facts\n\n")
	p("| Source | Chart values | Notes |\n|---|---|---|\n")
	for _, f := range fieldDocs {
		p("| %s | %s | %s |\n", f.Field, f.Keys, f.Notes)
	}
	p("\nNot mapped:\n\n| Source | Why |\n|---|---|\n")
	for _, f := range notMapped {
		p("| %s | %s |\n", f.Field, f.Notes)
	}

	p("\n## Labels with no effect\n\n")
	p("These labels of Magnum's Heat driver, the StackHPC driver or the VEXXHOST driver are recognised and ignored with a warning.\n\n")
	p("| Label | Why |\n|---|---|\n")
	for _, name := range sortedIgnoredLabels() {
		p("| `%s` | %s |\n", name, ignoredLabels[name])
	}
	return w.Bytes()
}

func backquoteAll(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
	}
	return strings.Join(out, ", ")
}

// autoscalingMarkdown is docs/labels.md's Autoscaling section.
func autoscalingMarkdown(p func(format string, args ...any)) {
	p("## Autoscaling\n\n")
	p("With `auto_scaling_enabled`, each worker node group is autoscaled between its minimum and maximum; the default worker group takes them from the labels `min_node_count` and `max_node_count` when set, other groups from their own `min_node_count` and `max_node_count`. ")
	p("Magnum's `min_node_count` is non-nullable with default 0, so 0 often means \"not given\". A minimum of 0 is honoured, and the group scales from zero, where someone wrote it: the `min_node_count` label (default group), or a node group that also has a `max_node_count` (`openstack coe nodegroup create --min-nodes 0 --max-nodes 3`). ")
	p("Elsewhere it becomes 1 with a warning, as it does when the flavor's capacity is unknown (`magnum-capi render` given an input without `flavors`). An unset maximum is the node group's `node_count`. A group whose minimum equals its maximum is not autoscaled.\n\n")
	p("### Scale from zero\n\n")
	p("The cluster autoscaler cannot see the size of a node that does not exist yet. Its Cluster API provider then reads the node shape from annotations on the MachineDeployment, and chart %s has no value for them, so the sidecar's Helm post-renderer adds them to every autoscaled node group's MachineDeployment on every install and upgrade (they are part of the release; Helm removes them when a group stops being autoscaled). ", ChartVersion)
	p("They come from the node group's Nova flavor, looked up as the user at each create, update, resize and upgrade:\n\n")
	p("| annotation | value |\n|---|---|\n")
	p("| `%s` | the flavor's vCPUs |\n", CapacityCPU)
	p("| `%s` | the flavor's RAM in MiB, e.g. `4096Mi` (exact; not rounded to G) |\n", CapacityMemory)
	p("| `%s` | the boot volume's size when the nodes boot from a volume (`boot_volume_size`), else the flavor's root disk, e.g. `40Gi`; absent for a flavor with a 0 GB disk and no boot volume |\n", CapacityEphemeralDisk)
	p("| `%s` | `%d`, kubelet's default (the chart does not change it and no label sets it) |\n", CapacityMaxPods, KubeletMaxPods)
	p("| `%s`, `%s` | the flavor's GPUs and `values.gpuResourceName` (default `%s`), only when the flavor has GPUs |\n", CapacityGPUCount, CapacityGPUType, DefaultGPUResourceName)
	p("| `%s` | the node labels kubelet registers (`node_labels`, the node group's labels, `capi.stackhpc.com/node-group`), so pods that select them trigger a scale-up |\n", CapacityLabels)
	p("| `%s` | the node group's taints (`node_taints`), so pods that do not tolerate them do not |\n\n", CapacityTaints)
	p("GPUs are read from two forms of the flavor's extra specs: vGPUs from placement, `resources:VGPU=N` (also in a request group, `resources1:VGPU=N`), and PCI passthrough, `pci_passthrough:alias=NAME[:COUNT][,NAME[:COUNT]]`, of which only the aliases listed in `values.gpuPCIAliases` count (an alias can as well be a NIC). ")
	p("Other resource classes (`resources:CUSTOM_*`) are not read. An extra spec in one of these forms whose count is not a whole number refuses the autoscaled node group, naming the flavor and the extra spec. ")
	p("Every autoscaled group is annotated, not only those at minimum 0: the autoscaler reads the annotations only while a group has no node, and annotating a MachineDeployment rolls no machine (Cluster API propagates a MachineDeployment's `.annotations` to its MachineSets in place, without a rollout: [MachineDeployment controller](https://cluster-api.sigs.k8s.io/developer/core/controllers/machine-deployment)), so changing a minimum later changes nothing else. The annotations are rendered into the release rather than applied next to it with a field manager of their own: one write, no window in which a new group exists without them, every Helm revision (and `helm rollback`) has them, and Helm's three-way merge removes them when a group stops being autoscaled.\n\n")
	p("VEXXHOST's magnum-cluster-api also writes these annotations (on the MachineDeployments of its ClusterClass topology, from the flavor, when it writes the Cluster: `magnum_cluster_api/resources.py` at commit 3890a362) but differs: memory rounded up to whole decimal gigabytes (`ceil(ram/1024)G`, 4096 MiB becomes `4G`, which is less than 4 GiB), the ephemeral disk as a bare number (`\"40\"`, which the autoscaler reads as 40 bytes), no GPU, taint or maxPods annotation, and Magnum's `min_node_count` used as given, so every autoscaled group whose minimum was left at Magnum's default 0 can be scaled to zero.\n\n")
	systemPodsMarkdown(p)
}
