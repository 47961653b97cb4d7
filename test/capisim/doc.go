// Package capisim is a Cluster API simulator for the test bed: a small set of
// controller-runtime reconcilers that play Cluster API (core, kubeadm
// bootstrap, kubeadm control plane), Cluster API Provider OpenStack and the
// azimuth cluster-api-addon-provider against a real API server, so a release
// of the openstack-cluster chart goes from created to ready to deleted
// without OpenStack and without workload clusters.
//
// It is test-only code; the product never imports it. Run it in a test with
// Start (its own manager) or New (the caller's manager), or out of process
// with the capisim command (test/capisim/cmd/capisim -kubeconfig ...).
//
// # What it does
//
// For every Cluster the chart creates, after short delays (Options.Step) it
// advances what the real controllers would:
//
//   - OpenStackCluster: finalizer, network, router, security groups, an API
//     load balancer with a floating IP from the documentation ranges
//     (203.0.113.0/24, then 198.51.100.0/24, 192.0.2.0/24),
//     spec.controlPlaneEndpoint, status.ready, initialization.provisioned and
//     CAPO's v1beta1 conditions.
//   - Cluster: finalizer, owner references and the cluster-name label on its
//     infrastructure and control plane, the endpoint, initialization,
//     v1beta2 conditions, the deprecated v1beta1 conditions, phase, replica
//     counters and observedGeneration.
//   - KubeadmControlPlane: the cluster CA Secrets when absent, the
//     <cluster>-kubeconfig Secret (again, from the current CA Secret, when
//     it is deleted), control-plane Machines one at a time (each
//     with a KubeadmConfig, its bootstrap data Secret and an OpenStackMachine
//     cloned from the machine template), rolling updates that surge one
//     Machine, status and conditions.
//   - MachineDeployment: what CAPI's defaulting webhook would have set
//     (replicas, from the autoscaler min-size annotation when omitted),
//     MachineSets per template, rolling updates honouring maxSurge and
//     maxUnavailable, MachineSet preflight checks (no new workers while the
//     control plane is upgrading or at another minor version), scale down
//     that removes Machines annotated cluster.x-k8s.io/delete-machine first.
//   - Machines: bootstrap data (workers wait for the control plane to be
//     initialized), an OpenStack instance that builds then becomes ACTIVE,
//     addresses, providerID, nodeRef, conditions and phase; deletion drains,
//     deletes the infrastructure and bootstrap objects, then releases.
//   - HelmRelease and Manifests (addons.stackhpc.com): finalizer, owner
//     reference to the Cluster, the addons.stackhpc.com labels, phases
//     Pending, Installing, Deployed (and Upgrading on a spec change) once the
//     Cluster is ready for them.
//   - Deletion in CAPI's order (workers, control plane, infrastructure), and
//     what Kubernetes' garbage collector would delete afterwards (templates,
//     addons, health checks and Secrets owned by the Cluster or the control
//     plane), since the test bed runs no garbage collector.
//
// The simulator reads and writes the CAPI kinds at their storage version,
// v1beta2, and fills their deprecated v1beta1 status too, so that readers of
// the v1beta1 API (through CAPI's conversion) see what they would see with
// the real controllers. It marks the Machines (and MachineSets) it makes with annotations
// of its own, capisim.magnum-capi.io/replacement (made by a rollout) and
// capisim.magnum-capi.io/kubeadm-config-hash (which kubeadm configuration a
// control-plane Machine was made from); nothing should read them.
//
// What it simplifies: there is no workload cluster, so nodes, etcd members
// and static pods are healthy as soon as a Machine's node exists; CAPI's
// Random deletion order picks the newest Machine; certificates it generates
// use ECDSA P-256 keys unless the KubeadmControlPlane asks otherwise; no
// MachineHealthCheck remediation, autoscaler, bastion or ClusterClass.
//
// # Failure injection
//
// Faults are chosen per Cluster. Three sources are merged (annotation over
// ConfigMap over Go): Options.Rules and Simulator.SetRules from Go, a ConfigMap
// read while running, and annotations on the Cluster object.
//
// Annotations on the Cluster (the chart's clusterAnnotations value sets them):
//
//	capisim.magnum-capi.io/infra-failure: "<OpenStack error>"  # empty: an Octavia quota error
//	capisim.magnum-capi.io/infra-failure-terminal: "true"
//	capisim.magnum-capi.io/addon-failure: "<glob of addon object names>"
//	capisim.magnum-capi.io/addon-failure-message: "<failureMessage>"
//	capisim.magnum-capi.io/stuck-rollout: "true"
//	capisim.magnum-capi.io/stuck-deletion: "true"
//
// The ConfigMap capisim in namespace capisim-system (Options.RulesConfigMap)
// holds, under the key "rules", a YAML list of rules that also apply to
// Clusters not created yet:
//
//	rules: |
//	  - cluster: "quota-*"        # glob (path.Match) on the Cluster name
//	    namespace: "magnum-*"     # optional glob on its namespace
//	    infraFailure: ""          # present and empty: the default quota error
//	    infraFailureTerminal: false
//	    addonFailure: "*-cni-calico"
//	    addonFailureMessage: "..."
//	    stuckRollout: true
//	    stuckDeletion: true
//
// What each fault does to the objects:
//
//   - infra failure: CAPO cannot create the API load balancer. The
//     OpenStackCluster stays ready=false with its Ready and APIEndpointReady
//     conditions False (reason OpenStackError / APIEndpointConfigFailed) and
//     the OpenStack error as message, as CAPO v0.14 does for a quota error,
//     which it retries forever. With infraFailureTerminal it also sets
//     status.failureReason "UpdateError" (the only value CAPO v0.14 writes)
//     and status.failureMessage, and the Cluster carries them in
//     status.deprecated.v1beta1. Clearing the fault lets provisioning finish.
//   - addon failure: matching HelmRelease/Manifests end in phase Failed with
//     status.failureMessage instead of Deployed, and stay so until their spec
//     changes (the addon provider's permanent error).
//   - stuck rollout: Machines created to replace out-of-date ones (a rolling
//     update of the control plane or a node group) stay Provisioning: their
//     OpenStack instance never leaves BUILD. Scaling up is unaffected.
//   - stuck deletion: the OpenStackCluster finalizer is never removed (CAPO
//     reports Neutron refusing to delete the network), so the Cluster stays
//     with deletionTimestamp set and its Deleting condition waiting for
//     infrastructure deletion.
package capisim
