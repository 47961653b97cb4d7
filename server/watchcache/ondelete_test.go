package watchcache

import (
	"log/slog"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// TestOnDeleteNamesTheCluster: a deletion, a tombstone's included, tells
// the OnDelete functions the cluster by the label the kind is indexed by;
// adds, updates and objects of no cluster tell nothing.
func TestOnDeleteNamesTheCluster(t *testing.T) {
	meta := func(labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "magnum-p", Name: "x", Labels: labels}
	}
	tests := []struct {
		name  string
		gvk   schema.GroupVersionKind
		event func(h toolscache.ResourceEventHandler)
		want  []string
	}{
		{"a Cluster deleted", ClusterGVK, func(h toolscache.ResourceEventHandler) {
			h.OnDelete(&clusterv1.Cluster{ObjectMeta: meta(map[string]string{kube.ChartClusterLabel: "demo"})})
		}, []string{"magnum-p/demo"}},
		{"a release record's tombstone", SecretGVK, func(h toolscache.ResourceEventHandler) {
			h.OnDelete(toolscache.DeletedFinalStateUnknown{Obj: &metav1.PartialObjectMetadata{ObjectMeta: meta(map[string]string{"owner": "helm", "name": "demo"})}})
		}, []string{"magnum-p/demo"}},
		{"a server, by CAPI's label", OpenStackServerGVK, func(h toolscache.ResourceEventHandler) {
			s := &OpenStackServer{}
			s.ObjectMeta = meta(map[string]string{clusterv1.ClusterNameLabel: "demo", kube.ChartClusterLabel: "other"})
			h.OnDelete(s)
		}, []string{"magnum-p/demo"}},
		{"an update", ClusterGVK, func(h toolscache.ResourceEventHandler) {
			c := &clusterv1.Cluster{ObjectMeta: meta(map[string]string{kube.ChartClusterLabel: "demo"})}
			h.OnAdd(c, false)
			h.OnUpdate(c, c)
		}, nil},
		{"a server without its cluster's label", OpenStackServerGVK, func(h toolscache.ResourceEventHandler) {
			s := &OpenStackServer{}
			s.ObjectMeta = meta(nil)
			h.OnDelete(s)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &Cache{log: slog.New(slog.DiscardHandler), seen: newSeenVersions(), failed: newFailedAddons(nil)}
			var got []string
			ch.OnDelete(func(ns, stackID string) { got = append(got, ns+"/"+stackID) })
			tt.event(ch.handler(tt.gvk))
			if !slices.Equal(got, tt.want) {
				t.Errorf("told %v, want %v", got, tt.want)
			}
		})
	}
}

// TestOnChangeNamesTheCluster: a Cluster's or control plane's add, real
// update and deletion tell the OnChange functions the cluster; a resync
// (the same resourceVersion) and other kinds tell nothing.
func TestOnChangeNamesTheCluster(t *testing.T) {
	meta := func(rv string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "magnum-p", Name: "x", ResourceVersion: rv, Labels: map[string]string{kube.ChartClusterLabel: "demo"}}
	}
	cluster := func(rv string) *clusterv1.Cluster { return &clusterv1.Cluster{ObjectMeta: meta(rv)} }
	tests := []struct {
		name  string
		gvk   schema.GroupVersionKind
		event func(h toolscache.ResourceEventHandler)
		want  int
	}{
		{"a Cluster added", ClusterGVK, func(h toolscache.ResourceEventHandler) { h.OnAdd(cluster("1"), true) }, 1},
		{"a Cluster changed", ClusterGVK, func(h toolscache.ResourceEventHandler) { h.OnUpdate(cluster("1"), cluster("2")) }, 1},
		{"a resync", ClusterGVK, func(h toolscache.ResourceEventHandler) { h.OnUpdate(cluster("2"), cluster("2")) }, 0},
		{"a Cluster deleted", ClusterGVK, func(h toolscache.ResourceEventHandler) { h.OnDelete(cluster("3")) }, 1},
		{"a control plane changed", ControlPlaneGVK, func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(&controlplanev1.KubeadmControlPlane{ObjectMeta: meta("1")}, &controlplanev1.KubeadmControlPlane{ObjectMeta: meta("2")})
		}, 1},
		{"a Machine changed", MachineGVK, func(h toolscache.ResourceEventHandler) {
			h.OnUpdate(&clusterv1.Machine{ObjectMeta: meta("1")}, &clusterv1.Machine{ObjectMeta: meta("2")})
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := &Cache{log: slog.New(slog.DiscardHandler), seen: newSeenVersions(), failed: newFailedAddons(nil)}
			got := 0
			ch.OnChange(func(ns, stackID string) {
				if ns+"/"+stackID == "magnum-p/demo" {
					got++
				}
			})
			tt.event(ch.handler(tt.gvk))
			if got != tt.want {
				t.Errorf("told %d times, want %d", got, tt.want)
			}
		})
	}
}
