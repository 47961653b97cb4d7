package capicontrollers

import (
	"context"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// outages applies the api-server-down fault: every step it stops or
// restarts each workload cluster's endpoint as its faults say. It runs in
// the manager (a Runnable) until the manager stops.
type outages struct{ *Provider }

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
			if err := o.workloads.setDown(key, o.faultsFor(cluster).APIServerDown); err != nil {
				o.log.Error(err, "applying the api-server-down fault", "cluster", key)
			}
		}
	}
}
