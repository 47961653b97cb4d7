package kube

import (
	"context"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Objects is everything the watch cache holds for one cluster: one
// consistent-enough read for status derivation, made without any API request.
// The objects are the cache's own: read them, never modify them.
type Objects struct {
	Cluster            *clusterv1.Cluster
	InfraCluster       *unstructured.Unstructured
	ControlPlane       *controlplanev1.KubeadmControlPlane
	MachineDeployments []clusterv1.MachineDeployment
	Machines           []clusterv1.Machine
	Addons             []unstructured.Unstructured
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
// (BenchmarkCacheObjects). Lists still get their own slices, so sorting them
// is safe; changing an object's fields is not.
func (ch *Cache) Objects(ctx context.Context, ns, stackID string) (*Objects, error) {
	if err := ch.WaitForSync(ctx); err != nil {
		return nil, err
	}
	inCluster := []client.ListOption{client.InNamespace(ns), client.MatchingFields{indexByChartCluster: stackID}}
	if !ch.copyReads {
		inCluster = append(inCluster, client.UnsafeDisableDeepCopy)
	}
	out := &Objects{}

	var clusters clusterv1.ClusterList
	if err := ch.cache.List(ctx, &clusters, inCluster...); err != nil {
		return nil, err
	}
	for i := range clusters.Items {
		if clusters.Items[i].Name == stackID {
			out.Cluster = &clusters.Items[i]
		}
	}
	var kcps controlplanev1.KubeadmControlPlaneList
	if err := ch.cache.List(ctx, &kcps, inCluster...); err != nil {
		return nil, err
	}
	if len(kcps.Items) > 0 {
		out.ControlPlane = &kcps.Items[0]
	}
	var mds clusterv1.MachineDeploymentList
	if err := ch.cache.List(ctx, &mds, inCluster...); err != nil {
		return nil, err
	}
	out.MachineDeployments = mds.Items
	var machines clusterv1.MachineList
	if err := ch.cache.List(ctx, &machines, inCluster...); err != nil {
		return nil, err
	}
	out.Machines = machines.Items

	oscs := &unstructured.UnstructuredList{}
	oscs.SetGroupVersionKind(listKind(OpenStackClusterGVK))
	if err := ch.cache.List(ctx, oscs, inCluster...); err != nil {
		return nil, err
	}
	for i := range oscs.Items {
		if oscs.Items[i].GetName() == stackID {
			out.InfraCluster = &oscs.Items[i]
		}
	}
	for _, gvk := range []schema.GroupVersionKind{HelmReleaseGVK, ManifestsGVK} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(listKind(gvk))
		if err := ch.cache.List(ctx, l, inCluster...); err != nil {
			return nil, err
		}
		out.Addons = append(out.Addons, l.Items...)
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

	rel, err := ch.release(ctx, ns, stackID)
	if err != nil {
		return nil, err
	}
	out.Release = rel
	return out, nil
}

func (ch *Cache) release(ctx context.Context, ns, name string) (ReleaseRecord, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(listKind(SecretGVK))
	if err := ch.cache.List(ctx, list, client.InNamespace(ns), client.MatchingFields{indexByRelease: name}); err != nil {
		return ReleaseRecord{}, err
	}
	return newestRevision(list.Items), nil
}

// newestRevision reads Helm's storage labels: name, status, version and
// createdAt (Unix seconds) on each sh.helm.release.v1.<name>.v<N> Secret.
func newestRevision(items []metav1.PartialObjectMetadata) ReleaseRecord {
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
