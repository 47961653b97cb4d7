package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Index names for the watch cache.
const (
	indexByChartCluster = "magnum-capi/chart-cluster"
	indexByRelease      = "magnum-capi/helm-release"
)

// Objects is everything the watch cache holds for one cluster: one
// consistent-enough read for status derivation, made without any API request.
type Objects struct {
	Cluster            *clusterv1.Cluster
	InfraCluster       *unstructured.Unstructured
	ControlPlane       *controlplanev1.KubeadmControlPlane
	MachineDeployments []clusterv1.MachineDeployment
	Machines           []clusterv1.Machine
	Addons             []unstructured.Unstructured
	Release            ReleaseRecord
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

// NotSyncedError is returned while the cache has not finished its first list:
// answering then would report stale or missing objects.
type NotSyncedError struct{ Cluster string }

func (e *NotSyncedError) Error() string {
	return fmt.Sprintf("the watch cache of management cluster %s is still syncing", e.Cluster)
}

// Unavailable classifies the error for the gRPC boundary: retry shortly.
func (e *NotSyncedError) Unavailable() bool { return true }

// Cache is the sidecar's watch cache of one management cluster: informers on
// the kinds status is derived from, limited to objects carrying the chart's
// cluster label, with managedFields stripped and an index by cluster.
type Cache struct {
	name   string
	cache  cache.Cache
	synced atomic.Bool
}

func chartObjects() []client.Object {
	osc := &unstructured.Unstructured{}
	osc.SetGroupVersionKind(OpenStackClusterGVK)
	hr := &unstructured.Unstructured{}
	hr.SetGroupVersionKind(HelmReleaseGVK)
	mf := &unstructured.Unstructured{}
	mf.SetGroupVersionKind(ManifestsGVK)
	return []client.Object{
		&clusterv1.Cluster{}, &controlplanev1.KubeadmControlPlane{}, &clusterv1.MachineDeployment{},
		&clusterv1.Machine{}, osc, hr, mf,
	}
}

func helmSecretsObject() client.Object {
	s := &metav1.PartialObjectMetadata{}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return s
}

// StartCache starts the informers and returns at once; answers wait for the
// first sync (see Objects). Stop it by cancelling ctx.
func (c *Cluster) StartCache(ctx context.Context, log *slog.Logger) (*Cache, error) {
	hasChartLabel, err := labels.NewRequirement(ChartClusterLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	byChartLabel := cache.ByObject{Label: labels.NewSelector().Add(*hasChartLabel)}
	byObject := map[client.Object]cache.ByObject{
		helmSecretsObject(): {Label: labels.SelectorFromSet(labels.Set{helmOwnerLabel: "helm"})},
	}
	for _, obj := range chartObjects() {
		byObject[obj] = byChartLabel
	}
	inf, err := cache.New(c.Config, cache.Options{
		Scheme:           c.Scheme,
		ByObject:         byObject,
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("watch cache of %s: %w", c.Name, err)
	}
	for _, obj := range chartObjects() {
		if err := inf.IndexField(ctx, obj, indexByChartCluster, func(o client.Object) []string {
			return []string{o.GetLabels()[ChartClusterLabel]}
		}); err != nil {
			return nil, fmt.Errorf("indexing %T: %w", obj, err)
		}
	}
	if err := inf.IndexField(ctx, helmSecretsObject(), indexByRelease, func(o client.Object) []string {
		return []string{o.GetLabels()["name"]}
	}); err != nil {
		return nil, err
	}
	ch := &Cache{name: c.Name, cache: inf}
	go func() {
		if err := inf.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("watch cache stopped", "management_cluster", c.Name, "err", err)
		}
	}()
	go func() {
		// Ask for every informer so all of them start now, not at first use.
		for _, obj := range append(chartObjects(), helmSecretsObject()) {
			if _, err := inf.GetInformer(ctx, obj); err != nil {
				log.Error("starting informer", "management_cluster", c.Name, "kind", fmt.Sprintf("%T", obj), "err", err)
				return
			}
		}
		if inf.WaitForCacheSync(ctx) {
			ch.synced.Store(true)
			log.Info("watch cache synced", "management_cluster", c.Name)
		}
	}()
	return ch, nil
}

// WaitForSync blocks until the first sync or ctx ends.
func (ch *Cache) WaitForSync(ctx context.Context) error {
	for !ch.synced.Load() {
		select {
		case <-ctx.Done():
			return &NotSyncedError{Cluster: ch.name}
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// Synced reports whether the first sync finished.
func (ch *Cache) Synced() bool { return ch.synced.Load() }

// Objects reads one cluster's objects from memory. It waits for the first
// sync up to ctx's deadline.
func (ch *Cache) Objects(ctx context.Context, ns, stackID string) (*Objects, error) {
	if err := ch.WaitForSync(ctx); err != nil {
		return nil, err
	}
	inCluster := []client.ListOption{client.InNamespace(ns), client.MatchingFields{indexByChartCluster: stackID}}
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
	oscs.SetGroupVersionKind(OpenStackClusterGVK.GroupVersion().WithKind("OpenStackClusterList"))
	if err := ch.cache.List(ctx, oscs, inCluster...); err != nil {
		return nil, err
	}
	for i := range oscs.Items {
		if oscs.Items[i].GetName() == stackID {
			out.InfraCluster = &oscs.Items[i]
		}
	}
	for _, gvk := range []struct{ list string }{{"HelmReleaseList"}, {"ManifestsList"}} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(HelmReleaseGVK.GroupVersion().WithKind(gvk.list))
		if err := ch.cache.List(ctx, l, inCluster...); err != nil {
			return nil, err
		}
		out.Addons = append(out.Addons, l.Items...)
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
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
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
