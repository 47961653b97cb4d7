package capisim

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// CAPO's v1beta1 condition types and reasons (api/v1beta1/conditions_consts.go).
const (
	capoNetworkReady        = clusterv1.ConditionType("NetworkReady")
	capoRouterReady         = clusterv1.ConditionType("RouterReady")
	capoSecurityGroupsReady = clusterv1.ConditionType("SecurityGroupsReady")
	capoAPIEndpointReady    = clusterv1.ConditionType("APIEndpointReady")
	capoReady               = clusterv1.ConditionType("Ready")
	capoOpenStackError      = "OpenStackError"
	capoAPIEndpointFailed   = "APIEndpointConfigFailed"
	// capoUpdateError is the only failureReason CAPO v0.14 writes on an
	// OpenStackCluster (DeprecatedCAPOUpdateClusterError).
	capoUpdateError = "UpdateError"
)

// infraClusterReconciler plays CAPO's OpenStackCluster controller.
type infraClusterReconciler struct{ *Simulator }

func (r *infraClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *infraClusterReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	osc := newUnstructured(gvkOpenStackCluster)
	if err := r.client.Get(ctx, req.NamespacedName, osc); err != nil {
		if apierrors.IsNotFound(err) {
			r.ips.releaseFloatingIP(req.String())
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// CAPO does nothing until the Cluster controller has made the Cluster
	// its owner.
	clusterName, _ := ownerName(osc, "Cluster")
	if clusterName == "" {
		return ctrl.Result{}, nil
	}
	cluster, err := r.getCluster(ctx, osc.GetNamespace(), clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil {
		// Only a dangling object left by a deletion could get here; CAPO
		// would retry forever, the simulator lets it go to avoid leaks.
		if osc.GetDeletionTimestamp() != nil {
			r.pace.forget(osc.GetUID())
			return ctrl.Result{}, r.removeFinalizer(ctx, osc, openStackClusterFinalizer)
		}
		return after(r.opts.Step), nil
	}
	if osc.GetDeletionTimestamp() != nil {
		return r.reconcileDelete(ctx, cluster, osc)
	}
	if deref(cluster.Spec.Paused, false) {
		return ctrl.Result{}, nil
	}
	if added, err := r.addFinalizer(ctx, osc, openStackClusterFinalizer); err != nil || added {
		return after(r.opts.Step), err
	}
	if ready, _, _ := unstructured.NestedBool(osc.Object, "status", "ready"); ready {
		return ctrl.Result{}, nil
	}
	if d := r.pace.wait(osc.GetUID(), "provision"); d > 0 {
		return after(d), nil
	}
	defer r.pace.stepped(osc.GetUID(), "provision")
	if _, found, _ := unstructured.NestedMap(osc.Object, "status", "network"); !found {
		return after(r.opts.Step), r.provisionNetwork(ctx, cluster, osc)
	}
	return r.provisionEndpoint(ctx, cluster, osc)
}

// clusterResourceName is how CAPO names the OpenStack resources of a cluster.
func clusterResourceName(cluster *clusterv1.Cluster) string {
	return fmt.Sprintf("%s-%s", cluster.Namespace, cluster.Name)
}

// nodeCIDR is the subnet the cluster's machines get addresses from.
func nodeCIDR(osc *unstructured.Unstructured) string {
	if subnets, ok, _ := unstructured.NestedSlice(osc.Object, "status", "network", "subnets"); ok && len(subnets) > 0 {
		if m, ok := subnets[0].(map[string]any); ok {
			if cidr, ok := m["cidr"].(string); ok && cidr != "" {
				return cidr
			}
		}
	}
	if subnets, ok, _ := unstructured.NestedSlice(osc.Object, "spec", "managedSubnets"); ok && len(subnets) > 0 {
		if m, ok := subnets[0].(map[string]any); ok {
			if cidr, ok := m["cidr"].(string); ok && cidr != "" {
				return cidr
			}
		}
	}
	return defaultNodeCIDR
}

// provisionNetwork is CAPO's first step: external network, the cluster
// network and subnet (or the pre-existing one the spec names), the router
// and the security groups.
func (r *infraClusterReconciler) provisionNetwork(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) error {
	original := osc.DeepCopy()
	crn := clusterResourceName(cluster)
	netName := "k8s-clusterapi-cluster-" + crn
	netID := fakeUUID("network", string(osc.GetUID()))
	if id, ok, _ := unstructured.NestedString(osc.Object, "spec", "network", "id"); ok && id != "" {
		netID = id
	}
	cidr := nodeCIDR(osc)
	extID := fakeUUID("external-network")
	if id, ok, _ := unstructured.NestedString(osc.Object, "spec", "externalNetwork", "id"); ok && id != "" {
		extID = id
	}
	status := map[string]any{
		"externalNetwork": map[string]any{"id": extID, "name": "public"},
		"network": map[string]any{
			"id": netID, "name": netName,
			"subnets": []any{map[string]any{"id": fakeUUID("subnet", netID), "name": netName, "cidr": cidr}},
		},
		"router": map[string]any{
			"id": fakeUUID("router", string(osc.GetUID())), "name": netName,
			"ips": []any{r.ips.floatingIP(crn + "/router")},
		},
		"controlPlaneSecurityGroup": map[string]any{
			"id": fakeUUID("sg-controlplane", string(osc.GetUID())), "name": "k8s-cluster-" + crn + "-secgroup-controlplane",
		},
		"workerSecurityGroup": map[string]any{
			"id": fakeUUID("sg-worker", string(osc.GetUID())), "name": "k8s-cluster-" + crn + "-secgroup-worker",
		},
		"ready": false,
	}
	for k, v := range status {
		if err := unstructured.SetNestedField(osc.Object, v, "status", k); err != nil {
			return err
		}
	}
	conds := capoConditions{osc}
	v1beta1conditions.MarkTrue(conds, capoNetworkReady)
	v1beta1conditions.MarkTrue(conds, capoRouterReady)
	v1beta1conditions.MarkTrue(conds, capoSecurityGroupsReady)
	v1beta1conditions.MarkFalse(conds, capoReady, "Provisioning", clusterv1.ConditionSeverityInfo, "Waiting for the API server load balancer")
	return r.patchStatus(ctx, osc, original)
}

// provisionEndpoint is CAPO's second step: the Octavia load balancer with a
// floating IP, which becomes the control plane endpoint unless the spec has
// one; or, with the infra-failure fault, the error CAPO reports instead.
func (r *infraClusterReconciler) provisionEndpoint(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) (ctrl.Result, error) {
	faults := r.faultsFor(cluster)
	if msg := faults.infraFailureMessage(); msg != "" {
		original := osc.DeepCopy()
		err := "failed to reconcile load balancer: " + msg
		conds := capoConditions{osc}
		v1beta1conditions.MarkFalse(conds, capoAPIEndpointReady, capoAPIEndpointFailed, clusterv1.ConditionSeverityError, "Failed to reconcile control plane endpoint: %s", err)
		if faults.InfraFailureTerminal {
			_ = unstructured.SetNestedField(osc.Object, capoUpdateError, "status", "failureReason")
			_ = unstructured.SetNestedField(osc.Object, err, "status", "failureMessage")
			v1beta1conditions.MarkFalse(conds, capoReady, capoOpenStackError, clusterv1.ConditionSeverityError, "%s", err)
		} else {
			v1beta1conditions.MarkFalse(conds, capoReady, capoOpenStackError, clusterv1.ConditionSeverityWarning, "%s", err)
		}
		// CAPO retries; so does the simulator, so that clearing the fault
		// lets provisioning finish.
		return after(2 * r.opts.Step), r.patchStatus(ctx, osc, original)
	}

	crn := clusterResourceName(cluster)
	port := int64(6443)
	if p, ok, _ := unstructured.NestedInt64(osc.Object, "spec", "apiServerPort"); ok && p > 0 {
		port = p
	}
	host, hostSet, _ := unstructured.NestedString(osc.Object, "spec", "controlPlaneEndpoint", "host")
	if p, ok, _ := unstructured.NestedInt64(osc.Object, "spec", "controlPlaneEndpoint", "port"); ok && p > 0 && hostSet && host != "" {
		port = p
	}
	fip := r.ips.floatingIP(osc.GetNamespace() + "/" + osc.GetName())
	lbEnabled, _, _ := unstructured.NestedBool(osc.Object, "spec", "apiServerLoadBalancer", "enabled")
	if !hostSet || host == "" {
		host = fip
		specOriginal := osc.DeepCopy()
		if err := unstructured.SetNestedMap(osc.Object, map[string]any{"host": host, "port": port}, "spec", "controlPlaneEndpoint"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Patch(ctx, osc, client.MergeFrom(specOriginal)); err != nil {
			return ctrl.Result{}, err
		}
	}

	original := osc.DeepCopy()
	if lbEnabled {
		network, _, _ := unstructured.NestedMap(osc.Object, "status", "network")
		vip, err := r.ips.fixedIP(clusterKey(cluster), nodeCIDR(osc), "load-balancer-vip")
		if err != nil {
			return ctrl.Result{}, err
		}
		lb := map[string]any{
			"id": fakeUUID("loadbalancer", string(osc.GetUID())), "name": "k8s-clusterapi-cluster-" + crn + "-kubeapi",
			"internalIP": vip, "ip": fip,
			"allowedCIDRs":        []any{},
			"loadBalancerNetwork": network,
		}
		if err := unstructured.SetNestedMap(osc.Object, lb, "status", "apiServerLoadBalancer"); err != nil {
			return ctrl.Result{}, err
		}
	}
	omitAZ, _, _ := unstructured.NestedBool(osc.Object, "spec", "controlPlaneOmitAvailabilityZone")
	_ = unstructured.SetNestedMap(osc.Object, map[string]any{"nova": map[string]any{"controlPlane": !omitAZ}}, "status", "failureDomains")
	_ = unstructured.SetNestedField(osc.Object, true, "status", "ready")
	_ = unstructured.SetNestedField(osc.Object, true, "status", "initialization", "provisioned")
	unstructured.RemoveNestedField(osc.Object, "status", "failureReason")
	unstructured.RemoveNestedField(osc.Object, "status", "failureMessage")
	conds := capoConditions{osc}
	v1beta1conditions.MarkTrue(conds, capoAPIEndpointReady)
	v1beta1conditions.MarkTrue(conds, capoReady)
	return ctrl.Result{}, r.patchStatus(ctx, osc, original)
}

// reconcileDelete is CAPO's deletion: wait for the cluster's Machines to
// go, delete the load balancer, router, network and security groups, then
// release the finalizer; with the stuck-deletion fault Neutron refuses.
func (r *infraClusterReconciler) reconcileDelete(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) (ctrl.Result, error) {
	machines := &clusterv1.MachineList{}
	if err := r.client.List(ctx, machines, client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return ctrl.Result{}, err
	}
	if len(machines.Items) > 0 {
		return after(r.opts.Step), nil
	}
	if d := r.pace.wait(osc.GetUID(), "delete"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(osc.GetUID(), "delete")
	if r.faultsFor(cluster).StuckDeletion {
		original := osc.DeepCopy()
		netID, _, _ := unstructured.NestedString(osc.Object, "status", "network", "id")
		msg := fmt.Sprintf(`failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron.example.test:9696/v2.0/networks/%s], but got 409 instead: {"NeutronError": {"type": "NetworkInUse", "message": "Unable to complete operation on network %s. There are one or more ports still in use on the network.", "detail": ""}}`, netID, netID)
		v1beta1conditions.MarkFalse(capoConditions{osc}, capoReady, capoOpenStackError, clusterv1.ConditionSeverityWarning, "%s", msg)
		return after(2 * r.opts.Step), r.patchStatus(ctx, osc, original)
	}
	r.ips.releaseFloatingIP(osc.GetNamespace() + "/" + osc.GetName())
	r.ips.releaseFloatingIP(clusterResourceName(cluster) + "/router")
	r.ips.releaseFixedIP(clusterKey(cluster), "load-balancer-vip")
	r.pace.forget(osc.GetUID())
	return ctrl.Result{}, r.removeFinalizer(ctx, osc, openStackClusterFinalizer)
}
