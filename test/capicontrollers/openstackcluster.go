package capicontrollers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// openStackClusterReconciler plays CAPO v0.14's OpenStackCluster controller
// (controllers/openstackcluster_controller.go): network, router, security
// groups, then the API server load balancer, whose address is the cluster's
// in-memory API server listening on 127.0.0.1 (a test bed cannot route a
// floating IP; the port is the listener's, not spec.apiServerPort).
type openStackClusterReconciler struct{ *Provider }

func (r *openStackClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *openStackClusterReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	osc := newUnstructured(gvkOpenStackCluster)
	if err := r.client.Get(ctx, req.NamespacedName, osc); err != nil {
		if apierrors.IsNotFound(err) {
			r.ips.releaseFloatingIP(req.String() + "/router")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// CAPO does nothing until the Cluster controller has made the Cluster
	// its owner.
	clusterName := ownerName(osc, "Cluster")
	if clusterName == "" {
		return ctrl.Result{}, nil
	}
	cluster, err := r.getCluster(ctx, osc.GetNamespace(), clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil {
		// CAPO would wait for ever; a leftover being deleted is let go so
		// that nothing leaks in the test bed.
		if osc.GetDeletionTimestamp() != nil {
			return ctrl.Result{}, r.releaseCluster(ctx, req.Namespace, clusterName, osc)
		}
		return after(r.opts.Step), nil
	}
	if osc.GetDeletionTimestamp() != nil {
		return r.reconcileDelete(ctx, cluster, osc)
	}
	if annotations.IsPaused(cluster, osc) {
		return ctrl.Result{}, nil
	}
	if added, err := r.addFinalizer(ctx, osc, openStackClusterFinalizer); err != nil || added {
		return after(r.opts.Step), err
	}
	if nestedBool(osc, "status", "ready") {
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

// clusterKey identifies a cluster (its subnet, its workload cluster).
func clusterKey(namespace, name string) string { return namespace + "/" + name }

// nodeCIDR is the subnet the cluster's machines get addresses from.
func nodeCIDR(osc *unstructured.Unstructured) string {
	for _, field := range [][]string{{"status", "network", "subnets"}, {"spec", "managedSubnets"}} {
		if subnets, ok, _ := unstructured.NestedSlice(osc.Object, field...); ok && len(subnets) > 0 {
			if m, ok := subnets[0].(map[string]any); ok {
				if cidr, ok := m["cidr"].(string); ok && cidr != "" {
					return cidr
				}
			}
		}
	}
	return defaultNodeCIDR
}

// provisionNetwork is CAPO's first step: external network, the cluster
// network and subnet (or the pre-existing one the spec names), the router
// and the security groups.
func (r *openStackClusterReconciler) provisionNetwork(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) error {
	original := osc.DeepCopy()
	crn := clusterResourceName(cluster)
	netName := "k8s-clusterapi-cluster-" + crn
	netID := fakeUUID("network", string(osc.GetUID()))
	if id := nestedString(osc, "spec", "network", "id"); id != "" {
		netID = id
	}
	extID := fakeUUID("external-network")
	if id := nestedString(osc, "spec", "externalNetwork", "id"); id != "" {
		extID = id
	}
	status := map[string]any{
		"externalNetwork": map[string]any{"id": extID, "name": "public"},
		"network": map[string]any{
			"id": netID, "name": netName,
			"subnets": []any{map[string]any{"id": fakeUUID("subnet", netID), "name": netName, "cidr": nodeCIDR(osc)}},
		},
		"router": map[string]any{
			"id": fakeUUID("router", string(osc.GetUID())), "name": netName,
			"ips": []any{r.ips.floatingIP(clusterKey(osc.GetNamespace(), osc.GetName()) + "/router")},
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
	v1beta1conditions.MarkTrue(conds, condNetworkReady)
	v1beta1conditions.MarkTrue(conds, condRouterReady)
	v1beta1conditions.MarkTrue(conds, condSecurityGroupsReady)
	return r.patchStatus(ctx, osc, original)
}

// provisionEndpoint is CAPO's second step: the Octavia load balancer, which
// becomes the control plane endpoint; or, with the infra-failure fault, the
// error CAPO reports instead (handleUpdateOSCError: Ready False, Warning
// while it retries, Error with failureReason when terminal).
func (r *openStackClusterReconciler) provisionEndpoint(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) (ctrl.Result, error) {
	faults := r.faultsFor(cluster)
	if msg := faults.infraFailureMessage(); msg != "" {
		original := osc.DeepCopy()
		err := "failed to reconcile load balancer: " + msg
		conds := capoConditions{osc}
		v1beta1conditions.MarkFalse(conds, condAPIEndpointReady, reasonAPIEndpointFailed, clusterv1.ConditionSeverityError, "Failed to reconcile control plane endpoint: %s", err)
		if faults.InfraFailureTerminal {
			_ = unstructured.SetNestedField(osc.Object, capoUpdateError, "status", "failureReason")
			_ = unstructured.SetNestedField(osc.Object, err, "status", "failureMessage")
			v1beta1conditions.MarkFalse(conds, condReady, reasonOpenStackError, clusterv1.ConditionSeverityError, "%s", err)
		} else {
			v1beta1conditions.MarkFalse(conds, condReady, reasonOpenStackError, clusterv1.ConditionSeverityWarning, "%s", err)
		}
		// CAPO retries; so does the fake, so that clearing the fault lets
		// provisioning finish.
		return after(2 * r.opts.Step), r.patchStatus(ctx, osc, original)
	}

	host, port, err := r.workloads.ensureCluster(ctx, clusterKey(cluster.Namespace, cluster.Name))
	if err != nil {
		return ctrl.Result{}, err
	}
	if nestedString(osc, "spec", "controlPlaneEndpoint", "host") == "" {
		specOriginal := osc.DeepCopy()
		if err := unstructured.SetNestedMap(osc.Object, map[string]any{"host": host, "port": int64(port)}, "spec", "controlPlaneEndpoint"); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Patch(ctx, osc, client.MergeFrom(specOriginal)); err != nil {
			return ctrl.Result{}, err
		}
	}

	original := osc.DeepCopy()
	if nestedBool(osc, "spec", "apiServerLoadBalancer", "enabled") {
		network, _, _ := unstructured.NestedMap(osc.Object, "status", "network")
		vip, err := r.ips.fixedIP(clusterKey(cluster.Namespace, cluster.Name), nodeCIDR(osc), "load-balancer-vip")
		if err != nil {
			return ctrl.Result{}, err
		}
		lb := map[string]any{
			"id":                  fakeUUID("loadbalancer", string(osc.GetUID())),
			"name":                "k8s-clusterapi-cluster-" + clusterResourceName(cluster) + "-kubeapi",
			"internalIP":          vip,
			"ip":                  host,
			"allowedCIDRs":        []any{},
			"loadBalancerNetwork": network,
		}
		if err := unstructured.SetNestedMap(osc.Object, lb, "status", "apiServerLoadBalancer"); err != nil {
			return ctrl.Result{}, err
		}
	}
	// One availability zone, "nova", as on a default Nova; CAPO leaves it
	// out of the control plane's failure domains when asked to.
	omitAZ := nestedBool(osc, "spec", "controlPlaneOmitAvailabilityZone")
	_ = unstructured.SetNestedMap(osc.Object, map[string]any{"nova": map[string]any{"controlPlane": !omitAZ}}, "status", "failureDomains")
	_ = unstructured.SetNestedField(osc.Object, true, "status", "ready")
	_ = unstructured.SetNestedField(osc.Object, true, "status", "initialization", "provisioned")
	unstructured.RemoveNestedField(osc.Object, "status", "failureReason")
	unstructured.RemoveNestedField(osc.Object, "status", "failureMessage")
	conds := capoConditions{osc}
	v1beta1conditions.MarkTrue(conds, condAPIEndpointReady)
	v1beta1conditions.MarkTrue(conds, condReady)
	return ctrl.Result{}, r.patchStatus(ctx, osc, original)
}

// reconcileDelete is CAPO's deletion: wait for the cluster's Machines to
// go, delete the load balancer, router, network and security groups, then
// release the finalizer; with the stuck-deletion fault Neutron refuses.
func (r *openStackClusterReconciler) reconcileDelete(ctx context.Context, cluster *clusterv1.Cluster, osc *unstructured.Unstructured) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(osc, openStackClusterFinalizer) {
		return ctrl.Result{}, nil
	}
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
		netID := nestedString(osc, "status", "network", "id")
		msg := fmt.Sprintf(`failed to delete network: Expected HTTP response code [202 204] when accessing [DELETE https://neutron.example.test:9696/v2.0/networks/%s], but got 409 instead: {"NeutronError": {"type": "NetworkInUse", "message": "Unable to complete operation on network %s. There are one or more ports still in use on the network.", "detail": ""}}`, netID, netID)
		v1beta1conditions.MarkFalse(capoConditions{osc}, condReady, reasonOpenStackError, clusterv1.ConditionSeverityWarning, "%s", msg)
		return after(2 * r.opts.Step), r.patchStatus(ctx, osc, original)
	}
	return ctrl.Result{}, r.releaseCluster(ctx, cluster.Namespace, cluster.Name, osc)
}

// releaseCluster frees what the cluster held (addresses, its workload
// cluster) and removes the finalizer.
func (r *openStackClusterReconciler) releaseCluster(ctx context.Context, namespace, clusterName string, osc *unstructured.Unstructured) error {
	key := clusterKey(namespace, clusterName)
	r.ips.releaseFloatingIP(clusterKey(osc.GetNamespace(), osc.GetName()) + "/router")
	r.ips.releaseFixedIP(key, "load-balancer-vip")
	if err := r.workloads.deleteCluster(key); err != nil {
		return err
	}
	r.pace.forget(osc.GetUID())
	return r.removeFinalizer(ctx, osc, openStackClusterFinalizer)
}
