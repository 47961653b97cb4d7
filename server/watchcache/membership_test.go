package watchcache

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

// recordedDir holds capistatus's snapshots of the real Cluster API
// controllers: each the objects `magnum-capi status --cluster` read of one
// cluster (all of the namespace's Helm release Secrets among them) and
// Magnum's side of the question.
const recordedDir = "../../capistatus/testdata/capi-v1.13"

// TestCacheAgreesWithSnapshot: on every recorded snapshot, mixed with the
// objects of the other recorded clusters of the same namespace, the cache
// (its selection, trimming, index and Objects) holds for a cluster exactly
// the objects capistatus.SnapshotFromObjects picks for it, and finds its
// Helm release when the sidecar did.
func TestCacheAgreesWithSnapshot(t *testing.T) {
	recordings := readRecordings(t)
	for _, r := range recordings {
		t.Run(r.name, func(t *testing.T) {
			objs := slices.Clone(r.objs)
			for _, other := range recordings {
				if other.stackID != r.stackID && other.first {
					objs = append(objs, other.clusterObjects()...)
				}
			}
			snap, err := capistatus.SnapshotFromObjects(r.stackID, objs)
			if err != nil {
				t.Fatalf("SnapshotFromObjects: %v", err)
			}
			cached, err := indexedCache(t, objs).Objects(context.Background(), r.namespace, r.stackID)
			if err != nil {
				t.Fatal(err)
			}
			got, want := snapshotNames(cachedSnapshot(t, cached)), snapshotNames(snap)
			if !slices.Equal(got, want) {
				t.Errorf("the cache holds %v\nthe snapshot picks %v", got, want)
			}
			if len(want) == 0 {
				t.Error("the snapshot picks no object")
			}
			if cached.Release.Exists != r.releaseExists {
				t.Errorf("the cache finds the release: %v, the recording says %v", cached.Release.Exists, r.releaseExists)
			}
		})
	}
}

// recording is one recorded snapshot.
type recording struct {
	name, stackID, namespace string
	releaseExists            bool
	objs                     []*unstructured.Unstructured
	// first: the first recording of its cluster, the one mixed into the
	// other clusters' (one version of each object).
	first bool
}

// clusterObjects are the recording's objects but Helm's Secrets, which every
// recording holds all of.
func (r recording) clusterObjects() []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(r.objs), func(o *unstructured.Unstructured) bool { return o.GroupVersionKind() == SecretGVK })
}

func readRecordings(t *testing.T) []recording {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(recordedDir, "*", "request.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no recorded snapshots in %s: %v", recordedDir, err)
	}
	seen := map[string]bool{}
	var out []recording
	for _, reqPath := range dirs {
		var req capistatus.Recording
		raw, err := os.ReadFile(reqPath)
		if err == nil {
			err = json.Unmarshal(raw, &req)
		}
		if err != nil {
			t.Fatalf("%s: %v", reqPath, err)
		}
		r := recording{name: filepath.Base(filepath.Dir(reqPath)), stackID: req.StackID, releaseExists: req.ReleaseExists, first: !seen[req.StackID]}
		seen[req.StackID] = true
		r.objs = readObjects(t, filepath.Join(filepath.Dir(reqPath), "objects.yaml"))
		for _, o := range r.objs {
			r.namespace = o.GetNamespace()
		}
		out = append(out, r)
	}
	return out
}

func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs
}

// indexedCache is a synced cache holding objs as the informers would: the
// kinds and labels the cache selects, decoded into its types, trimmed and
// indexed as New's informers do.
func indexedCache(t *testing.T, objs []*unstructured.Unstructured) *Cache {
	t.Helper()
	ch := &Cache{synced: make(chan struct{}), failed: newFailedAddons(time.Now), seen: newSeenVersions(), intern: newInterner()}
	close(ch.synced)
	strip := trimForStatus(cache.TransformStripManagedFields(), ch.intern)
	ch.indexers = map[schema.GroupVersionKind]toolscache.Indexer{}
	for _, gvk := range cachedKinds() {
		ch.indexers[gvk] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{indexByCluster: byCluster(gvk.GroupKind(), ch.intern)})
	}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		indexer, watched := ch.indexers[gvk]
		sel, err := selector(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if !watched || !sel.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		obj := typedObject(gvk)
		raw, err := json.Marshal(u.Object)
		if err == nil {
			err = json.Unmarshal(raw, obj)
		}
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, u.GetName(), err)
		}
		transform := strip
		if isAddon(gvk) {
			transform = ch.failed.transform(strip)
		}
		trimmed, err := transform(obj)
		if err == nil {
			err = indexer.Add(trimmed)
		}
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, u.GetName(), err)
		}
	}
	return ch
}

// cachedSnapshot is the snapshot of what the cache holds of one cluster.
func cachedSnapshot(t *testing.T, o *Objects) capistatus.Snapshot {
	t.Helper()
	s := capistatus.Snapshot{
		Cluster: o.Cluster, InfraCluster: o.InfraCluster, ControlPlane: o.ControlPlane,
		MachineDeployments: o.MachineDeployments, Machines: o.Machines, Servers: o.Servers,
	}
	for i := range o.Addons {
		a, err := capistatus.AddonFromObject(&o.Addons[i])
		if err != nil {
			t.Fatal(err)
		}
		s.Addons = append(s.Addons, a)
	}
	return s
}

// snapshotNames lists a snapshot's objects as "Kind name", sorted.
func snapshotNames(s capistatus.Snapshot) []string {
	var out []string
	add := func(kind, name string) { out = append(out, kind+" "+name) }
	if s.Cluster != nil {
		add("Cluster", s.Cluster.Name)
	}
	if s.ControlPlane != nil {
		add("KubeadmControlPlane", s.ControlPlane.Name)
	}
	if s.InfraCluster != nil {
		add("OpenStackCluster", s.InfraCluster.Name)
	}
	for _, md := range s.MachineDeployments {
		add("MachineDeployment", md.Name)
	}
	for _, m := range s.Machines {
		add("Machine", m.Name)
	}
	for _, srv := range s.Servers {
		add("OpenStackServer", srv.Name)
	}
	for _, a := range s.Addons {
		add(a.Kind, a.Name)
	}
	slices.Sort(out)
	return out
}
