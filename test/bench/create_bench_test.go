package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// BenchmarkCreate is the create target: the CreateCluster RPC until
// the release is deployed (the RPC returns after Helm's install; the Helm
// record is checked to say deployed), against a baseline that server-side
// applies the same rendered objects (the release's own manifest, renamed)
// from one process, one after the other. Rounds alternate which goes first;
// the medians and their ratio (target ≤ 2) are reported.
func BenchmarkCreate(b *testing.B) {
	w := stackFor(b)
	rounds := envInt(b, "MAGNUM_CAPI_BENCH_CREATE_ROUNDS", 7)
	ns := helmvalues.Namespace("magnum", w.stack.Info.Project.ID)
	var rpc, baseline []time.Duration
	var made []*cluster
	var applied []*unstructured.Unstructured
	var manifest, manifestOf string
	// perKind is where the baseline's time goes, summed over its rounds.
	perKind := map[string]time.Duration{}
	for i := range rounds {
		runRPC := func() {
			c := newCluster(b, w, fmt.Sprintf("create-%d", i), 2)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start := time.Now()
			if err := c.create(ctx, w.driver); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			made = append(made, c)
			rel, ok, err := latestRelease(ctx, w.kube, ns, c.Spec.Cluster.StackId)
			if err != nil || !ok || rel.status != "deployed" {
				b.Fatalf("release %s after CreateCluster returned: %+v (found %v, %v); want deployed", c.Spec.Cluster.StackId, rel.status, ok, err)
			}
			rpc = append(rpc, took)
			if manifest == "" {
				manifest, manifestOf = rel.manifest, c.Spec.Cluster.StackId
			}
		}
		runBaseline := func() {
			// Same length as a stack id, so the objects are the same size.
			name := fmt.Sprintf("baseline-%d-", i)
			name += strings.Repeat("b", len(manifestOf)-len(name))
			objs, err := renamedObjects(manifest, manifestOf, name, ns)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start := time.Now()
			for _, o := range objs {
				t0 := time.Now()
				if err := w.kube.Patch(ctx, o, client.Apply, client.FieldOwner("bench-baseline"), client.ForceOwnership); err != nil {
					b.Fatalf("server-side apply of %s %s: %v", o.GetKind(), o.GetName(), err)
				}
				perKind[o.GetKind()] += time.Since(t0)
			}
			baseline = append(baseline, time.Since(start))
			applied = append(applied, objs...)
		}
		if i%2 == 0 || manifest == "" {
			runRPC()
			runBaseline()
		} else {
			runBaseline()
			runRPC()
		}
	}
	objects := strings.Count(manifest, "\nkind: ") + boolInt(strings.HasPrefix(manifest, "kind: "))
	rpcMed, baseMed := median(rpc), median(baseline)
	b.Logf("create RPC → deployed: %s (median %s)", durations(rpc), rpcMed)
	b.Logf("baseline SSA of the release's %d objects: %s (median %s)", objects, durations(baseline), baseMed)
	kinds := slices.Collect(maps.Keys(perKind))
	slices.SortFunc(kinds, func(a, c string) int { return int(perKind[c] - perKind[a]) })
	var where []string
	for _, k := range kinds {
		where = append(where, fmt.Sprintf("%s %s", k, (perKind[k]/time.Duration(len(baseline))).Round(time.Millisecond)))
	}
	b.Logf("baseline time by kind, per round: %s", strings.Join(where, ", "))
	progress("create: RPC median %s, SSA baseline median %s", rpcMed, baseMed)
	b.ReportMetric(float64(rpcMed.Milliseconds()), "rpc-median-ms")
	b.ReportMetric(float64(baseMed.Milliseconds()), "ssa-median-ms")
	b.ReportMetric(float64(rpcMed)/float64(baseMed), "rpc/ssa")
	b.ReportMetric(0, "ns/op")

	// Leave the stack as found: the clusters through the driver, the
	// baseline's objects directly (the Cluster API controllers delete what a Cluster owns).
	var wg sync.WaitGroup
	errs := make(chan error, len(made))
	for _, c := range made {
		wg.Go(func() { errs <- c.delete(w.driver, 10*time.Minute) })
	}
	for _, o := range applied {
		if err := w.kube.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			b.Errorf("deleting baseline %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Error(err)
		}
	}
}

// renamedObjects decodes a release manifest into objects, with the release
// name from replaced by to and their namespace set to ns.
func renamedObjects(manifest, from, to, ns string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(strings.ReplaceAll(manifest, from, to)), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding the manifest: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the release manifest of %s holds no object", from)
	}
	return out, nil
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 50) }

// percentile is the nearest-rank percentile p of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}
