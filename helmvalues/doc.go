// Package helmvalues turns a Magnum cluster into values for the azimuth-cloud
// openstack-cluster Helm chart, release 0.27.0. It is pure: no I/O, no clock,
// no randomness except through ReleaseName's reader. The same Input and Config
// always give the same values, byte for byte once marshalled.
//
// Build takes the cluster template, the cluster, its node groups, the resolved
// Glance image, the project's Cinder volume types, the resolved Neutron ids
// and the driver configuration. It validates everything before returning any
// values: a problem is a *FieldError (the user's input: a label, a Magnum
// field, an OpenStack fact) or a *ConfigError (the driver's configuration),
// all problems of one build joined with errors.Join.
//
// The label registry (labels.go) is the one description of every label: its
// typed parser, default, scope, the chart keys it writes and its
// documentation. docs/labels.md is generated from it (go generate, or
// go test ./helmvalues -update) and a test fails when it is stale.
//
// # Decisions
//
// Names follow the StackHPC magnum-capi-helm driver so its clusters can be
// adopted: the release name is the cluster's stack_id (at most 43
// characters, as ReleaseName and StackHPC make it, so that
// "<release>-control-plane" and the node group objects fit in 63; the chart
// itself truncates longer addon object names), the credentials Secret is
// "<stack_id>-cloud-credentials", and a node group keeps StackHPC's
// sanitized name whenever that is a valid chart name and "<release>-<name>"
// fits in 63 characters. Otherwise NodeGroupName derives a deterministic,
// valid, short-enough name ending in a hash of the Magnum name; two node
// groups with the same chart name are refused. The chart appends
// "-<8 hex>" to the names of the node groups' machine templates, which can
// reach 72 characters; that is valid for those kinds (253) and is never a
// label value.
//
// Only keys chart 0.27 reads are sent: apiServer.allowedCIDRs (not
// allowedCidrs), internalNetwork.dnsNameservers (not the deprecated
// clusterNetworking.dnsNameservers), no kubernetesDashboard.
//
// Values the chart writes unquoted into its templates (flavors, ids, volume
// types, availability zones...) must read back from YAML as the same string:
// "2", "yes" or "a: b" are refused rather than becoming a number, a boolean
// or YAML structure. No label value may contain "{{", "{%" or "{#": the chart
// runs tpl on some values and the addon provider renders every addon's
// values and manifests as Jinja2. A last pass over the finished values checks
// that nothing carrying template delimiters got through.
//
// network_driver flannel (Magnum's default) or empty gives the chart's
// default CNI, Calico, with a warning: the chart installs nothing for a CNI
// type it does not know.
//
// Autoscaling: Magnum's min_node_count is non-nullable with default 0, so 0
// often means "not given". It is honoured (scale from zero) where someone
// wrote it: the min_node_count label (default group) or a node group that
// also has a max_node_count; elsewhere, and when the flavor was not looked
// up, it becomes 1 with a warning. Every autoscaled group's MachineDeployment
// gets the cluster autoscaler's capacity annotations from its flavor
// (capacity.go, Result.MachineAnnotations), which the sidecar's Helm
// post-renderer adds: chart 0.27 has no value for them. An unset maximum is
// the node count; equal bounds mean no autoscaling.
//
// Registry mirrors: the chart defaults to Azimuth's quay.io mirrors. They are
// removed (registryMirrors: null) unless mirrors are configured or
// Config.KeepChartRegistryMirrors is set. Adopting a StackHPC cluster, which
// used those mirrors, therefore rolls its nodes once unless the operator
// keeps them.
//
// Node groups that Magnum is deleting (DELETE_IN_PROGRESS, DELETE_COMPLETE)
// are left out, so a retried delete converges.
//
// The API server always gets a load balancer (the template's
// master_lb_enabled is not used), its floating IP follows the label
// master_lb_floating_ip_enabled (not the template's floating_ip_enabled),
// and Cinder StorageClasses default to reclaim policy Retain: all three as
// the StackHPC driver does, because changing them breaks existing clusters.
//
// Keystone authentication uses the cluster's project id and the configured
// Keystone URL, never the requester's context.
package helmvalues

//go:generate go test -run ^TestLabelsDoc$ -update .
