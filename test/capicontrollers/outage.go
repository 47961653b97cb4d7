package capicontrollers

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// outages applies the faults that strike running clusters, which no object
// change announces: every step it stops or restarts each workload
// cluster's endpoint (api-server-down), and wakes the OpenStackMachines
// whose servers are to vanish (server-lost). It runs in the manager (a
// Runnable) until the manager stops.
type outages struct {
	*Provider
	// wake feeds OpenStackMachines to their controller.
	wake chan<- event.GenericEvent
}

func (o outages) Start(ctx context.Context) error {
	tick := time.NewTicker(o.opts.Step)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for _, key := range o.workloads.keys() {
			namespace, name, _ := strings.Cut(key, "/")
			cluster := &clusterv1.Cluster{}
			if err := o.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cluster); err != nil {
				continue
			}
			faults := o.faultsFor(cluster)
			if err := o.workloads.setDown(key, faults.APIServerDown); err != nil {
				o.log.Error(err, "applying the api-server-down fault", "cluster", key)
			}
			if faults.ServerLost != "" {
				o.wakeMachines(ctx, cluster, faults.ServerLost)
			}
		}
	}
}

// wakeMachines sends the cluster's OpenStackMachines whose names match glob
// and whose servers are not yet lost to their controller.
func (o outages) wakeMachines(ctx context.Context, cluster *clusterv1.Cluster, glob string) {
	list := newUnstructuredList(gvkOpenStackMachine)
	if err := o.client.List(ctx, list, client.InNamespace(cluster.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name}); err != nil {
		return
	}
	for i := range list.Items {
		osm := &list.Items[i]
		if globMatch(glob, osm.GetName()) && !o.nova.isLost(nestedString(osm, "status", "instanceID")) {
			select {
			case o.wake <- event.GenericEvent{Object: osm}:
			case <-ctx.Done():
				return
			}
		}
	}
}
