package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/server/watchcache"
)

// template is a complete cluster's objects, as the watch cache reads them
// (the chart's CAPI, CAPO and addon objects selected by the chart's cluster
// label, and the Helm release record), to be copied under other names.
type template struct {
	stackID, uuid, project string
	objects                []*unstructured.Unstructured
}

// clone is one copy of the template: a cluster Magnum would poll.
type clone struct {
	spec *pb.ClusterSpec
}

// watchedKinds are the kinds the sidecar's watch cache reads a cluster from
// (server/watchcache/kinds.go), at the versions it reads them.
var watchedKinds = []schema.GroupVersionKind{
	watchcache.ClusterGVK, watchcache.ControlPlaneGVK, watchcache.MachineDeploymentGVK, watchcache.MachineGVK,
	watchcache.OpenStackClusterGVK, watchcache.OpenStackServerGVK, watchcache.HelmReleaseGVK, watchcache.ManifestsGVK,
}

// clusterLabel is the label the watch cache finds gvk's objects of a
// cluster by: CAPI's on CAPO's servers, the chart's on the rest.
func clusterLabel(gvk schema.GroupVersionKind) string {
	if gvk == watchcache.OpenStackServerGVK {
		return clusterv1.ClusterNameLabel
	}
	return kube.ChartClusterLabel
}

// readTemplate reads a complete cluster's watched objects.
func readTemplate(ctx context.Context, kc client.Client, c *cluster) (*template, error) {
	ns := helmvalues.Namespace("magnum", c.Spec.Cluster.ProjectId)
	t := &template{stackID: c.Spec.Cluster.StackId, uuid: c.Spec.Cluster.Uuid, project: c.Spec.Cluster.ProjectId}
	for _, gvk := range watchedKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := kc.List(ctx, l, client.InNamespace(ns), client.MatchingLabels{clusterLabel(gvk): t.stackID}); err != nil {
			return nil, fmt.Errorf("listing %s of %s: %w", gvk.Kind, t.stackID, err)
		}
		if len(l.Items) == 0 {
			return nil, fmt.Errorf("cluster %s has no %s", t.stackID, gvk.Kind)
		}
		for i := range l.Items {
			t.objects = append(t.objects, &l.Items[i])
		}
	}
	var secrets corev1.SecretList
	if err := kc.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": t.stackID}); err != nil {
		return nil, err
	}
	if len(secrets.Items) == 0 {
		return nil, fmt.Errorf("cluster %s has no Helm release record", t.stackID)
	}
	for i := range secrets.Items {
		raw, err := json.Marshal(&secrets.Items[i])
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			return nil, err
		}
		u.SetAPIVersion("v1")
		u.SetKind("Secret")
		t.objects = append(t.objects, u)
	}
	return t, nil
}

// sizes is how many objects of each kind the template has and their JSON
// size, the input the watch cache decodes per cluster.
func (t *template) sizes() string {
	count, size := map[string]int{}, map[string]int{}
	var kinds []string
	for _, o := range t.objects {
		raw, _ := json.Marshal(o.Object)
		k := o.GetKind()
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
		size[k] += len(raw)
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s %d B", count[k], k, size[k]))
	}
	return strings.Join(parts, ", ")
}

// cloneProject is the project of clone i: 100 clusters a project, as many
// namespaces as a cloud with that many projects would have.
func cloneProject(i int) string { return fmt.Sprintf("be0c%028x", i/100) }

// cloneStackID is a stack id of the driver's form for clone i.
func cloneStackID(i int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for j := range b {
		b[j] = alphabet[int(b[j])%len(alphabet)]
	}
	return fmt.Sprintf("bench-%05d-%s", i, b)
}

// copyFor is clone i's objects: the template's with the names, uuid,
// project and namespace replaced and the metadata the API server assigns
// removed; their statuses are the template's.
func (t *template) copyFor(w *world, i int) ([]*unstructured.Unstructured, *clone, error) {
	stackID, id, project := cloneStackID(i), uuid.NewString(), cloneProject(i)
	ns := helmvalues.Namespace("magnum", project)
	replacer := strings.NewReplacer(t.stackID, stackID, t.uuid, id, t.project, project)
	objs := make([]*unstructured.Unstructured, 0, len(t.objects))
	for _, obj := range t.objects {
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, nil, err
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(replacer.Replace(string(raw))), &u.Object); err != nil {
			return nil, nil, err
		}
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		u.SetNamespace(ns)
		objs = append(objs, u)
	}
	spec := specFor(w, stackID[:len(stackID)-13], id, project, 2)
	spec.Cluster.StackId = stackID
	return objs, &clone{spec: spec}, nil
}

// createThroughAPI creates a clone's objects through the API server, each
// then given its status through the status subresource (with observed
// generations set to the copy's own, so the copy is as up to date as its
// original).
func createThroughAPI(ctx context.Context, kc client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		status, hasStatus := u.Object["status"]
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "generation")
		if err := kc.Create(ctx, u); err != nil {
			return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if !hasStatus || u.GetKind() == "Secret" {
			continue
		}
		setObservedGeneration(status, u.GetGeneration())
		u.Object["status"] = status
		if err := kc.Status().Update(ctx, u); err != nil {
			return fmt.Errorf("setting the status of %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// setObservedGeneration sets every observedGeneration in a status (its own
// and its conditions') to gen.
func setObservedGeneration(v any, gen int64) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "observedGeneration" {
				v[k] = gen
				continue
			}
			setObservedGeneration(x, gen)
		}
	case []any:
		for _, x := range v {
			setObservedGeneration(x, gen)
		}
	}
}

// loader grows the set of clones, 16 at a time.
type loader struct {
	tmpl *template
	// write stores one clone's objects: through the API server or
	// straight into etcd (load_etcd_test.go).
	write  func(context.Context, []*unstructured.Unstructured) error
	clones []*clone
	// took is the time each growth took, for docs/benchmarks.md.
	took []time.Duration
}

const loadWorkers = 16

// newLoader is a loader of tmpl's copies that writes them as
// $MAGNUM_CAPI_BENCH_LOAD says: "etcd" (the default; etcdStore) or "api"
// (through the API server, then writing each status).
func newLoader(w *world, tmpl *template) (*loader, error) {
	switch mode := os.Getenv("MAGNUM_CAPI_BENCH_LOAD"); mode {
	case "", "etcd":
		store, err := newEtcdStore(w.stack.Env.EtcdURL(), w.kube, tmpl)
		if err != nil {
			return nil, err
		}
		return &loader{tmpl: tmpl, write: store.write}, nil
	case "api":
		return &loader{tmpl: tmpl, write: func(ctx context.Context, objs []*unstructured.Unstructured) error {
			return createThroughAPI(ctx, w.kube, objs)
		}}, nil
	default:
		return nil, fmt.Errorf("MAGNUM_CAPI_BENCH_LOAD=%q: want etcd or api", mode)
	}
}

// growTo makes clones until there are n, creating their namespaces first.
// With a budget (> 0) it stops feeding new clones once the budget of time
// has been spent, leaving fewer than n (on a machine too busy to load them).
func (l *loader) growTo(ctx context.Context, w *world, n int, budget time.Duration) error {
	have := len(l.clones)
	if n <= have {
		return nil
	}
	start := time.Now()
	for p := have / 100; p <= (n-1)/100; p++ {
		nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: helmvalues.Namespace("magnum", cloneProject(p*100))}}
		if err := w.kube.Create(ctx, nsObj); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	made := make([]*clone, n-have)
	jobs := make(chan int)
	errs := make(chan error, loadWorkers)
	var wg sync.WaitGroup
	for range loadWorkers {
		wg.Go(func() {
			for i := range jobs {
				objs, c, err := l.tmpl.copyFor(w, i)
				if err == nil {
					err = l.write(ctx, objs)
				}
				if err != nil {
					errs <- err
					return
				}
				made[i-have] = c
			}
		})
	}
	var err error
	fed := n
feed:
	for i := have; i < n; i++ {
		if budget > 0 && time.Since(start) > budget {
			fed = i
			break
		}
		if (i-have)%100 == 0 && i > have {
			progress("loaded %d of %d clusters in %s", i, n, time.Since(start).Round(time.Second))
		}
		select {
		case jobs <- i:
		case err = <-errs:
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	if err != nil {
		return err
	}
	l.clones = append(l.clones, made[:fed-have]...)
	l.took = append(l.took, time.Since(start))
	return nil
}
