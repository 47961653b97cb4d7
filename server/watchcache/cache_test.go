package watchcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// TestCacheObjects: one cluster's objects out of several clusters and
// namespaces, the release read from Helm's labels, nothing but metadata of
// the release Secrets held.
func TestCacheObjects(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	fakeCluster{Name: "alpha", Machines: 2}.create(t, ns)
	fakeCluster{Name: "beta", Machines: 1, Addons: []string{"cni-calico"}}.create(t, ns)
	fakeCluster{Name: "alpha", Machines: 3}.create(t, other)
	ch := startCache(t, nil)
	synced(t, ch)

	ctx := context.Background()
	var objs *Objects
	eventually(t, "alpha's objects", func() (bool, string) {
		var err error
		objs, err = ch.Objects(ctx, ns, "alpha")
		if err != nil {
			return false, err.Error()
		}
		return len(objs.Machines) == 2 && len(objs.Addons) == 6 && objs.Release.Exists, fmt.Sprintf("%d machines, %d addons", len(objs.Machines), len(objs.Addons))
	})
	for gvk, indexer := range ch.indexers {
		if _, ok := indexer.GetIndexers()[indexByCluster]; !ok || len(indexer.GetIndexers()) != 1 {
			t.Errorf("the %s informer's indexes are %v, want only %s", gvk.Kind, slices.Collect(maps.Keys(indexer.GetIndexers())), indexByCluster)
		}
	}
	if objs.Cluster == nil || objs.Cluster.Name != "alpha" || objs.Cluster.Namespace != ns {
		t.Errorf("Cluster = %v", objs.Cluster)
	}
	if objs.ControlPlane == nil || objs.ControlPlane.Name != "alpha-control-plane" {
		t.Errorf("ControlPlane = %v", objs.ControlPlane)
	}
	if objs.InfraCluster == nil || objs.InfraCluster.Name != "alpha" || objs.InfraCluster.Namespace != ns {
		t.Errorf("InfraCluster = %v", objs.InfraCluster)
	}
	if len(objs.MachineDeployments) != 1 || objs.MachineDeployments[0].Name != "alpha-default-worker" {
		t.Errorf("MachineDeployments = %v", objs.MachineDeployments)
	}
	for _, m := range objs.Machines {
		if !strings.HasPrefix(m.Name, "alpha-") || m.Namespace != ns {
			t.Errorf("machine %s/%s is not alpha's", m.Namespace, m.Name)
		}
		if len(m.ManagedFields) != 0 {
			t.Errorf("machine %s keeps %d managedFields entries in the cache", m.Name, len(m.ManagedFields))
		}
		if len(m.Status.Addresses) != 3 {
			t.Errorf("machine %s addresses %v", m.Name, m.Status.Addresses)
		}
	}
	kinds := map[string]int{}
	for _, a := range objs.Addons {
		kinds[a.Kind]++
		if !strings.HasPrefix(a.Name, "alpha-") || len(a.ManagedFields) != 0 || a.Spec.ClusterName != "alpha" {
			t.Errorf("addon %s: not alpha's (spec.clusterName %q), or managedFields kept", a.Name, a.Spec.ClusterName)
		}
	}
	if kinds["HelmRelease"] != 5 || kinds["Manifests"] != 1 {
		t.Errorf("addon kinds %v, want 5 HelmRelease and 1 Manifests", kinds)
	}
	want := ReleaseRecord{Exists: true, Revision: 2, Status: "deployed", Created: time.Unix(1782903600, 0)}
	if objs.Release != want {
		t.Errorf("Release = %+v, want %+v", objs.Release, want)
	}
	if len(objs.AddonFailedSince) != 0 {
		t.Errorf("AddonFailedSince = %v with no addon failed", objs.AddonFailedSince)
	}

	none, err := ch.Objects(ctx, ns, "gamma")
	if err != nil {
		t.Fatal(err)
	}
	if none.Cluster != nil || len(none.Machines)+len(none.Addons)+len(none.MachineDeployments) != 0 || none.Release.Exists {
		t.Errorf("objects of a cluster that does not exist: %+v", none)
	}
}

// TestCacheAddonFailedSince: the time an addon has been failing since,
// through the addon provider's status writes, a sidecar restart, a spec
// change, recovery and deletion, on the real API server's managedFields.
func TestCacheAddonFailedSince(t *testing.T) {
	ns := newNamespace(t)
	fakeCluster{Name: "failing", Machines: 0, Addons: []string{"cni-calico", "monitoring"}}.create(t, ns)
	ch := startCache(t, nil)
	synced(t, ch)
	ctx := context.Background()
	name := "failing-monitoring"

	failedAt := func() (types.UID, time.Time) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(HelmReleaseGVK)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			t.Fatal(err)
		}
		return u.GetUID(), lastWrite(u.GetManagedFields())
	}
	sinceIn := func(c *Cache) (bool, string, time.Time) {
		objs, err := c.Objects(ctx, ns, "failing")
		if err != nil {
			return false, err.Error(), time.Time{}
		}
		uid, _ := failedAt()
		since, ok := objs.AddonFailedSince[uid]
		return ok, fmt.Sprintf("%v", objs.AddonFailedSince), since
	}
	// seenSince waits until c reports the addon failed, and says since when.
	seenSince := func(c *Cache, what string) time.Time {
		var since time.Time
		eventually(t, what, func() (bool, string) {
			ok, state, s := sinceIn(c)
			since = s
			return ok, state
		})
		return since
	}

	setAddonPhase(t, ns, name, "Installing", "")
	// Writes are recorded to the second: a failure written in the same
	// second as the last change would be indistinguishable from it.
	time.Sleep(1100 * time.Millisecond)
	setAddonPhase(t, ns, name, "Failed", "helm install: timed out waiting for the condition")
	uid, written := failedAt()
	if since := seenSince(ch, "the failure seen"); !since.Equal(written) {
		t.Errorf("failed since %s, want the status write at %s", since, written)
	}

	// A second sidecar (a restart) starts from the API server's record, not
	// from when it first looked.
	time.Sleep(1100 * time.Millisecond)
	restarted := startCache(t, nil)
	synced(t, restarted)
	if since := seenSince(restarted, "the failure seen after a restart"); !since.Equal(written) {
		t.Errorf("after a restart: failed since %s, want %s", since, written)
	}

	// The provider retries the same spec: the clock keeps running.
	time.Sleep(1100 * time.Millisecond)
	setAddonPhase(t, ns, name, "Upgrading", "")
	setAddonPhase(t, ns, name, "Failed", "helm upgrade: timed out waiting for the condition")
	eventually(t, "the failure after a retry", func() (bool, string) {
		ok, state, s := sinceIn(ch)
		return ok && s.Equal(written), state
	})

	// A spec change is a new attempt: its clock starts at the change.
	time.Sleep(1100 * time.Millisecond)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(HelmReleaseGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, "kube-monitoring", "spec", "targetNamespace")
	if err := env.Client.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	_, changed := failedAt()
	if !changed.After(written) {
		t.Fatalf("spec change recorded at %s, not after the failure at %s", changed, written)
	}
	eventually(t, "the clock restarted by the spec change", func() (bool, string) {
		ok, state, s := sinceIn(ch)
		return ok && s.Equal(changed), state + " since " + s.String()
	})

	// Deployed stops the clock.
	setAddonPhase(t, ns, name, "Deployed", "")
	eventually(t, "recovery", func() (bool, string) {
		ok, state, _ := sinceIn(ch)
		return !ok, state
	})

	// A failed addon that is deleted is forgotten.
	setAddonPhase(t, ns, name, "Failed", "again")
	seenSince(ch, "the second failure")
	if err := env.Client.Delete(ctx, u); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted addon forgotten", func() (bool, string) {
		return ch.failed.len() == 0, fmt.Sprintf("%d tracked (uid %s)", ch.failed.len(), uid)
	})
}

// TestGiveUpAt: a read waiting for the first sync gives up a tenth of the
// caller's time before its deadline, at most a second before.
func TestGiveUpAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct{ left, want time.Duration }{
		{2 * time.Second, 1800 * time.Millisecond},
		{5 * time.Second, 4500 * time.Millisecond},
		{45 * time.Second, 44 * time.Second},
		{0, 0},
	} {
		if got := giveUpAt(now.Add(tc.left), now).Sub(now); got != tc.want {
			t.Errorf("with %s left: gives up after %s, want %s", tc.left, got, tc.want)
		}
	}
}

// TestCacheWaitsForSync: until every informer has listed, reads answer
// NotSyncedError (Unavailable), with time left before the caller's deadline
// and naming the problem; once synced, they answer.
func TestCacheWaitsForSync(t *testing.T) {
	ns := newNamespace(t)
	fakeCluster{Name: "slow", Machines: 1}.create(t, ns)
	reads := newGate(false)
	ch := startCache(t, holdReads(reads))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	start := time.Now()
	_, err := ch.Objects(ctx, ns, "slow")
	waited := time.Since(start)
	cancel()
	var notSynced *NotSyncedError
	if !errors.As(err, &notSynced) || !notSynced.Unavailable() {
		t.Fatalf("Objects before the first sync = %v, want NotSyncedError", err)
	}
	// How much earlier than the caller it gives up is giveUpAt's (tested
	// alone): measured here it would depend on the machine's load.
	if waited < time.Second {
		t.Errorf("gave up after %s, want to wait most of the 2s deadline", waited)
	}
	if !strings.Contains(err.Error(), "still syncing") {
		t.Errorf("error %q does not say the cache is syncing", err)
	}
	if ch.Synced() {
		t.Error("Synced() before any read answered")
	}

	// A read waiting when the reads are let through gets the objects.
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		objs, err := ch.Objects(ctx, ns, "slow")
		if err == nil && (objs.Cluster == nil || len(objs.Machines) != 1) {
			err = fmt.Errorf("objects after the sync: cluster %v, %d machines", objs.Cluster, len(objs.Machines))
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	reads.Open()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCacheNotSyncedNamesTheProblem: a cache that cannot list says why.
func TestCacheNotSyncedNamesTheProblem(t *testing.T) {
	ch := startCache(t, func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if strings.Contains(req.URL.Path, "/machines") {
				return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": {"application/json"}},
					Body:    io.NopCloser(strings.NewReader(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"machines.cluster.x-k8s.io is forbidden: User \"magnum-capi\" cannot list resource \"machines\"","reason":"Forbidden","code":403}`)),
					Request: req}, nil
			}
			return next.RoundTrip(req)
		})
	})
	var err error
	eventually(t, "the list error reported", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err = ch.Objects(ctx, "default", "any")
		return err != nil && strings.Contains(err.Error(), "forbidden"), fmt.Sprint(err)
	})
	if !strings.Contains(err.Error(), "Machine") {
		t.Errorf("error %q does not name the kind", err)
	}
}

// TestCacheBarrier: after a write, Behind names an object whose change the
// cache has not received; once the watch delivers it, nothing.
func TestCacheBarrier(t *testing.T) {
	ns := newNamespace(t)
	fakeCluster{Name: "rw", Machines: 2}.create(t, ns)
	events := newGate(true)
	ch := startCache(t, holdWatchEvents(events))
	synced(t, ch)
	ctx := context.Background()

	b, err := ch.TakeBarrier(ctx, ns, "rw")
	if err != nil {
		t.Fatal(err)
	}
	// Cluster, OpenStackCluster, KubeadmControlPlane, MachineDeployment,
	// 2 Machines, 5 HelmReleases, 1 Manifests, 2 release Secrets.
	if b.Len() != 14 {
		t.Errorf("barrier of %d objects, want 14", b.Len())
	}
	eventually(t, "caught up with the objects as created", func() (bool, string) {
		behind := ch.Behind(b)
		return behind == "", behind
	})

	events.Close()
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(MachineDeploymentGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rw-default-worker"}, md); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(md.Object, int64(5), "spec", "replicas")
	if err := env.Client.Update(ctx, md); err != nil {
		t.Fatal(err)
	}
	after, err := ch.TakeBarrier(ctx, ns, "rw")
	if err != nil {
		t.Fatal(err)
	}
	// Give the held event time to arrive, to show it is not delivered.
	time.Sleep(300 * time.Millisecond)
	if behind := ch.Behind(after); !strings.Contains(behind, "MachineDeployment rw-default-worker") {
		t.Errorf("Behind = %q while the update is held, want the MachineDeployment", behind)
	}
	objs, err := ch.Objects(ctx, ns, "rw")
	if err != nil {
		t.Fatal(err)
	}
	if r := objs.MachineDeployments[0].Spec.Replicas; r == nil || *r != 2 {
		t.Fatalf("the cache already has the update (replicas %v): the test shows nothing", r)
	}
	events.Open()
	eventually(t, "caught up after the update", func() (bool, string) {
		behind := ch.Behind(after)
		return behind == "", behind
	})
	objs, err = ch.Objects(ctx, ns, "rw")
	if err != nil {
		t.Fatal(err)
	}
	if r := objs.MachineDeployments[0].Spec.Replicas; r == nil || *r != 5 {
		t.Errorf("caught up, but replicas %v, want 5", r)
	}
}

// TestSeenVersions: per kind, the newest resourceVersion delivered.
func TestSeenVersions(t *testing.T) {
	gk := schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Machine"}
	other := schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "Cluster"}
	obj := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetResourceVersion(rv)
		return u
	}
	for _, tc := range []struct {
		name     string
		observed []string
		ask      schema.GroupKind
		rv       string
		want     bool
	}{
		{"nothing seen", nil, gk, "5", false},
		{"seen exactly", []string{"5"}, gk, "5", true},
		{"seen later", []string{"3", "9"}, gk, "5", true},
		{"only older", []string{"3", "4"}, gk, "5", false},
		{"out of order delivery keeps the newest", []string{"9", "3"}, gk, "5", true},
		{"longer number is newer", []string{"10"}, gk, "9", true},
		{"another kind's progress does not count", []string{"100"}, other, "5", false},
		{"not a number: cannot compare, counts as reached", []string{"abc"}, gk, "5", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeenVersions()
			for _, rv := range tc.observed {
				s.observe(gk, obj(rv))
			}
			if got := s.reached(tc.ask, tc.rv); got != tc.want {
				t.Errorf("reached(%s, %s) = %v, want %v", tc.ask.Kind, tc.rv, got, tc.want)
			}
		})
	}
}

// TestReadLive: the live reader sees what the cache holds for one
// cluster, with managedFields, and Helm's Secrets as metadata only.
func TestReadLive(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	fakeCluster{Name: "live", Machines: 2}.create(t, ns)
	fakeCluster{Name: "neighbour", Machines: 1, Addons: []string{"cni-calico"}}.create(t, ns)
	fakeCluster{Name: "live", Machines: 1}.create(t, other)
	kc, err := kube.Connect("test", env.Config)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := ReadLive(context.Background(), kc.Client, ns, "live")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetNamespace() != ns {
			t.Errorf("%s %s from namespace %s", o.GetKind(), o.GetName(), o.GetNamespace())
		}
		if o.GetKind() == "Secret" {
			if _, has := o.Object["data"]; has || o.GetAPIVersion() != "v1" || o.GetLabels()["owner"] != "helm" {
				t.Errorf("Secret %s read as %v", o.GetName(), o.Object)
			}
			continue
		}
		if o.GetLabels()[kube.ChartClusterLabel] != "live" {
			t.Errorf("%s %s is not the cluster's", o.GetKind(), o.GetName())
		}
		if len(o.GetManagedFields()) == 0 {
			t.Errorf("%s %s read without managedFields", o.GetKind(), o.GetName())
		}
	}
	want := map[string]int{"Cluster": 1, "OpenStackCluster": 1, "KubeadmControlPlane": 1, "MachineDeployment": 1, "Machine": 2, "HelmRelease": 5, "Manifests": 1,
		"Secret": 4} // both clusters' release Secrets: the namespace's releases
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
}
