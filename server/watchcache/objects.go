package watchcache

import (
	"context"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// Objects is everything the watch cache holds for one cluster: one
// consistent-enough read for status derivation, made without any API request.
// The objects are the cache's own: read them, never modify them.
type Objects struct {
	Cluster            *clusterv1.Cluster
	InfraCluster       *capistatus.OpenStackCluster
	ControlPlane       *controlplanev1.KubeadmControlPlane
	MachineDeployments []clusterv1.MachineDeployment
	Machines           []clusterv1.Machine
	// Servers are CAPO's OpenStackServers of the machines.
	Servers []capistatus.OpenStackServer
	// Addons are the HelmReleases and Manifests.
	Addons []capistatus.AddonObject
	// AddonFailedSince is, per addon UID, since when the addon has been
	// Failed as the cache saw it (see failedAddons); absent when unknown.
	AddonFailedSince map[types.UID]time.Time
	Release          ReleaseRecord
}

// ReleaseRecord is what Helm's storage Secrets say about a release, read from
// their labels only (the cache never holds release payloads).
type ReleaseRecord struct {
	Exists bool
	// Revision, Status and Created describe the newest revision.
	Revision int
	Status   string
	Created  time.Time
}

// Objects reads one cluster's objects from memory. It waits for the first
// sync up to shortly before ctx's deadline (see WaitForSync).
//
// Unless copyReads is set, the objects are the cache's own, not deep copies:
// status derivation only reads them, and skipping the copy makes a poll
// several times cheaper and lighter on the garbage collector
// (BenchmarkCacheObjects). The slices are the caller's, so sorting them is
// safe; changing an object's fields (or its maps) is not.
func (ch *Cache) Objects(ctx context.Context, ns, stackID string) (*Objects, error) {
	if err := ch.WaitForSync(ctx); err != nil {
		return nil, err
	}
	key := ns + "/" + stackID
	out := &Objects{}
	for _, o := range ch.inCluster(ClusterGVK, key) {
		out.Cluster = copied(ch, o.(*clusterv1.Cluster))
	}
	// Of the cluster's control planes and infrastructure clusters, the
	// ones its Cluster refers to (as SnapshotFromObjects picks them).
	member := capistatus.MembershipOf(stackID, out.Cluster)
	for _, o := range ch.inCluster(ControlPlaneGVK, key) {
		if kcp := o.(*controlplanev1.KubeadmControlPlane); member.Owns(ControlPlaneGVK.GroupKind(), kcp) {
			out.ControlPlane = copied(ch, kcp)
		}
	}
	// Slices sized once: a poll's garbage is mostly these copies.
	mds := ch.inCluster(MachineDeploymentGVK, key)
	out.MachineDeployments = make([]clusterv1.MachineDeployment, 0, len(mds))
	for _, o := range mds {
		out.MachineDeployments = append(out.MachineDeployments, *copied(ch, o.(*clusterv1.MachineDeployment)))
	}
	machines := ch.inCluster(MachineGVK, key)
	out.Machines = make([]clusterv1.Machine, 0, len(machines))
	for _, o := range machines {
		out.Machines = append(out.Machines, *copied(ch, o.(*clusterv1.Machine)))
	}
	servers := ch.inCluster(OpenStackServerGVK, key)
	out.Servers = make([]capistatus.OpenStackServer, 0, len(servers))
	for _, o := range servers {
		out.Servers = append(out.Servers, copied(ch, o.(*OpenStackServer)).OpenStackServer)
	}
	for _, o := range ch.inCluster(OpenStackClusterGVK, key) {
		if c := o.(*OpenStackCluster); member.Owns(OpenStackClusterGVK.GroupKind(), c) {
			out.InfraCluster = &copied(ch, c).OpenStackCluster
		}
	}
	// The decoder clears typed objects' apiVersion and kind: set them on
	// the caller's copies of the structs.
	releases, manifests := ch.inCluster(HelmReleaseGVK, key), ch.inCluster(ManifestsGVK, key)
	out.Addons = make([]capistatus.AddonObject, 0, len(releases)+len(manifests))
	for _, o := range releases {
		a := copied(ch, o.(*HelmRelease)).AddonObject
		a.SetGroupVersionKind(HelmReleaseGVK)
		out.Addons = append(out.Addons, a)
	}
	for _, o := range manifests {
		a := copied(ch, o.(*Manifests)).AddonObject
		a.SetGroupVersionKind(ManifestsGVK)
		out.Addons = append(out.Addons, a)
	}
	for i := range out.Addons {
		uid := out.Addons[i].GetUID()
		if since := ch.failed.get(uid); !since.IsZero() {
			if out.AddonFailedSince == nil {
				out.AddonFailedSince = map[types.UID]time.Time{}
			}
			out.AddonFailedSince[uid] = since
		}
	}
	var records []*metav1.PartialObjectMetadata
	for _, o := range ch.inCluster(SecretGVK, key) {
		records = append(records, o.(*metav1.PartialObjectMetadata))
	}
	out.Release = newestRevision(records)
	return out, nil
}

// inCluster is what the cache holds of kind gvk under index key
// "<namespace>/<name>" (the cluster's stack id; a release's name for Helm's
// Secrets).
func (ch *Cache) inCluster(gvk schema.GroupVersionKind, key string) []any {
	objs, err := ch.indexers[gvk].ByIndex(indexByCluster, key)
	if err != nil { // only for an index that does not exist
		return nil
	}
	return objs
}

// copied is o itself, or with copyReads a deep copy of it.
func copied[T any, P interface {
	*T
	runtime.Object
}](ch *Cache, o P) P {
	if !ch.copyReads {
		return o
	}
	return o.DeepCopyObject().(P)
}

// newestRevision reads Helm's storage labels: name, status, version and
// createdAt (Unix seconds) on each sh.helm.release.v1.<name>.v<N> Secret.
func newestRevision(items []*metav1.PartialObjectMetadata) ReleaseRecord {
	if len(items) == 0 {
		return ReleaseRecord{}
	}
	sort.Slice(items, func(i, j int) bool {
		vi, _ := strconv.Atoi(items[i].Labels["version"])
		vj, _ := strconv.Atoi(items[j].Labels["version"])
		return vi > vj
	})
	newest := items[0].Labels
	rec := ReleaseRecord{Exists: true, Status: newest["status"]}
	rec.Revision, _ = strconv.Atoi(newest["version"])
	if secs, err := strconv.ParseInt(newest["createdAt"], 10, 64); err == nil {
		rec.Created = time.Unix(secs, 0)
	} else {
		rec.Created = items[0].CreationTimestamp.Time
	}
	return rec
}
