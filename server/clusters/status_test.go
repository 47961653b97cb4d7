package clusters

import (
	"reflect"
	"testing"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/capistatus"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// TestSnapshotCarriesEveryKind: every kind the watch cache holds for a
// cluster reaches capistatus (the OpenStackServers, where Nova's refusals
// are, once did not).
func TestSnapshotCarriesEveryKind(t *testing.T) {
	objs := &watchcache.Objects{
		Cluster:            &clusterv1.Cluster{},
		InfraCluster:       &capistatus.OpenStackCluster{},
		ControlPlane:       &controlplanev1.KubeadmControlPlane{},
		MachineDeployments: make([]clusterv1.MachineDeployment, 1),
		Machines:           make([]clusterv1.Machine, 2),
		Servers:            make([]capistatus.OpenStackServer, 2),
		Addons:             []capistatus.AddonObject{{}},
	}
	objs.Addons[0].Kind = "HelmRelease"
	snap, err := snapshot(objs)
	if err != nil {
		t.Fatal(err)
	}
	// Every field of the snapshot is set: a field added to both and not
	// copied fails here.
	v := reflect.ValueOf(snap)
	for i := range v.NumField() {
		if v.Type().Field(i).Name == "Leftovers" {
			continue // read from the API server, and only for a deletion (status_leftovers.go)
		}
		if v.Field(i).IsZero() {
			t.Errorf("Snapshot.%s is empty: snapshot() does not copy it from the cache's objects", v.Type().Field(i).Name)
		}
	}
	if len(snap.Servers) != 2 || len(snap.Machines) != 2 || len(snap.Addons) != 1 {
		t.Errorf("servers %d, machines %d, addons %d; want 2, 2, 1", len(snap.Servers), len(snap.Machines), len(snap.Addons))
	}
}
