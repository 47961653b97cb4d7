package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// contestant is one way of making or changing a cluster's objects.
type contestant int

const (
	ours  contestant = iota // the CreateCluster / ResizeCluster RPC
	peer                    // one `helm upgrade --install` process (peer_test.go)
	floor                   // every rendered object server-side applied at once
)

var contestantNames = [...]string{"ours (RPC)", "peer (helm process)", "floor (parallel SSA)"}

// peerRotations: each contestant goes first, second and third equally
// often. Round 0 starts with ours: its release is what the others copy.
var peerRotations = [][3]contestant{{ours, peer, floor}, {peer, floor, ours}, {floor, ours, peer}}

// BenchmarkPeer is the side by side with the peer, in one run, rounds alternating
// the order: (a) our CreateCluster RPC until the release is deployed, (b)
// the peer's step, a `helm upgrade --install` process exactly as
// magnum-capi-helm runs it (same Helm code, same chart from the same
// loopback repository, the same values document renamed), (c) the floor,
// server-side apply of the same rendered objects all at once by a client
// without rate limits. Then the same three for an upgrade changing one
// node group's count (ResizeCluster 2 → 3 workers; the peer's values with
// that count; the floor applies the resized release's objects). Medians and
// pairwise ratios are reported; targets: ours ≤ 0.2 × peer, ≤ 1.5 × floor.
func BenchmarkPeer(b *testing.B) {
	w := stackFor(b)
	peerHelm(b)
	rounds := envInt(b, "MAGNUM_CAPI_BENCH_PEER_ROUNDS", 7)
	ns := helmvalues.Namespace("magnum", w.stack.Info.Project.ID)
	// Ours is the real binary, so its own metrics say how much of each RPC
	// was Helm's.
	proc := startProcess(b, w, binary(b, w))
	r := &peerRace{b: b, w: w, ns: ns, driver: proc.Driver, proc: proc}
	helmBefore, err := proc.helmSeconds()
	if err != nil {
		b.Fatal(err)
	}
	for i := range rounds {
		order := peerRotations[i%len(peerRotations)]
		for _, who := range order {
			r.create(i, who, r.name(i, who))
		}
		for _, who := range order {
			r.upgrade(i, who, r.name(i, who))
		}
	}
	helmAfter, err := proc.helmSeconds()
	if err != nil {
		b.Fatal(err)
	}
	r.report(helmBefore, helmAfter)
	r.cleanup()
}

// peerRace holds the rounds' clusters, template and times.
type peerRace struct {
	b      *testing.B
	w      *world
	ns     string
	driver pb.DriverServiceClient
	// proc is ours; with MAGNUM_CAPI_BENCH_PROFILES set, each of its
	// creates and upgrades is traced and profiled into that directory.
	proc *process
	// ourClusters are the RPC's clusters by round.
	ourClusters map[int]*cluster
	// peerNames and floorObjects are what the others made, for the cleanup.
	peerNames    []string
	floorObjects []*unstructured.Unstructured
	// template is round 0's release as created and as resized, and its
	// name: what the peer and the floor copy, renamed.
	template, resized release
	templateName      string
	createTimes       [3][]time.Duration
	upgradeTimes      [3][]time.Duration
	peerRSS           []float64
}

// name is round i's release name for peer or floor, as long as round 0's
// stack id so that the objects are the same size; ours is named by the RPC.
func (r *peerRace) name(i int, who contestant) string {
	n := fmt.Sprintf("%s-%d-", [...]string{"ours", "peer", "floor"}[who], i)
	return n + strings.Repeat("x", max(0, len(r.templateName)-len(n)))
}

func (r *peerRace) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Minute)
}

func (r *peerRace) create(i int, who contestant, name string) {
	b := r.b
	ctx, cancel := r.ctx()
	defer cancel()
	var took time.Duration
	switch who {
	case ours:
		c := newCluster(b, r.w, fmt.Sprintf("peer-%d", i), 2)
		defer r.profile(fmt.Sprintf("create-%d", i))()
		start := time.Now()
		if err := c.create(ctx, r.driver); err != nil {
			b.Fatal(err)
		}
		took = time.Since(start)
		if r.ourClusters == nil {
			r.ourClusters = map[int]*cluster{}
		}
		r.ourClusters[i] = c
		rel := r.deployed(ctx, c.Spec.Cluster.StackId, 1)
		if r.templateName == "" {
			r.template, r.templateName = rel, c.Spec.Cluster.StackId
		}
	case peer:
		values, err := renamedValues(r.template.values, r.templateName, name)
		if err != nil {
			b.Fatal(err)
		}
		run, err := peerDeploy(ctx, b, r.w, name, r.ns, values)
		if err != nil {
			b.Fatal(err)
		}
		r.peerNames = append(r.peerNames, name)
		r.peerRSS = append(r.peerRSS, run.maxRSS)
		r.deployed(ctx, name, 1)
		took = run.took
	case floor:
		took = r.applyFloor(ctx, r.template.manifest, name)
	}
	r.createTimes[who] = append(r.createTimes[who], took)
}

func (r *peerRace) upgrade(i int, who contestant, name string) {
	b := r.b
	ctx, cancel := r.ctx()
	defer cancel()
	const group, workers = "default-worker", 3
	var took time.Duration
	switch who {
	case ours:
		c := r.ourClusters[i]
		req, err := resizeRequest(c, group, workers)
		if err != nil {
			b.Fatal(err)
		}
		defer r.profile(fmt.Sprintf("upgrade-%d", i))()
		start := time.Now()
		if _, err := r.driver.ResizeCluster(ctx, req); err != nil {
			b.Fatalf("ResizeCluster %s: %v", c.Spec.Cluster.StackId, err)
		}
		took = time.Since(start)
		rel := r.deployed(ctx, c.Spec.Cluster.StackId, 2)
		if i == 0 {
			r.resized = rel
		}
	case peer:
		values, err := renamedValues(r.template.values, r.templateName, name)
		if err == nil {
			values, err = withMachineCount(values, group, workers)
		}
		if err != nil {
			b.Fatal(err)
		}
		run, err := peerDeploy(ctx, b, r.w, name, r.ns, values)
		if err != nil {
			b.Fatal(err)
		}
		r.peerRSS = append(r.peerRSS, run.maxRSS)
		r.deployed(ctx, name, 2)
		took = run.took
	case floor:
		if r.resized.manifest == "" {
			b.Fatal("the floor's upgrade ran before round 0's resize gave the resized objects")
		}
		took = r.applyFloor(ctx, r.resized.manifest, name)
	}
	r.upgradeTimes[who] = append(r.upgradeTimes[who], took)
}

// deployed checks release name's newest revision is revision and
// deployed, and returns it.
func (r *peerRace) deployed(ctx context.Context, name string, revision int) release {
	rel, ok, err := latestRelease(ctx, r.w.kube, r.ns, name)
	if err != nil || !ok || rel.status != "deployed" || rel.revision != revision {
		r.b.Fatalf("release %s: revision %d %s (found %v, %v); want revision %d deployed", name, rel.revision, rel.status, ok, err, revision)
	}
	return rel
}

func (r *peerRace) applyFloor(ctx context.Context, manifest, name string) time.Duration {
	objs, err := renamedObjects(manifest, r.templateName, name, r.ns)
	if err != nil {
		r.b.Fatal(err)
	}
	start := time.Now()
	if err := applyParallel(ctx, r.w.kube, objs); err != nil {
		r.b.Fatal(err)
	}
	took := time.Since(start)
	r.floorObjects = append(r.floorObjects, objs...)
	return took
}

// resizeRequest is Magnum's resize of c's node group to n nodes, the spec
// already carrying the new count as the conductor saves it first.
func resizeRequest(c *cluster, group string, n int32) (*pb.ResizeClusterRequest, error) {
	for _, ng := range c.Spec.Nodegroups {
		if ng.Name == group {
			ng.NodeCount, ng.Status = n, "UPDATE_IN_PROGRESS"
			c.Spec.Cluster.NodeCount, c.Spec.Cluster.Status = n, "UPDATE_IN_PROGRESS"
			return &pb.ResizeClusterRequest{Context: c.Context, Spec: c.Spec, NodegroupUuid: ng.Uuid, NodeCount: n}, nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no node group %s", c.Spec.Cluster.Name, group)
}

func (r *peerRace) report(helmBefore, helmAfter map[string][2]float64) {
	b := r.b
	for _, phase := range []struct {
		name, helm string
		times      [3][]time.Duration
	}{{"create", "install", r.createTimes}, {"upgrade", "upgrade", r.upgradeTimes}} {
		var med [3]time.Duration
		for who := range med {
			med[who] = median(phase.times[who])
			b.Logf("%s, %s: %s (median %s)", phase.name, contestantNames[who], durations(phase.times[who]), med[who])
		}
		if n := helmAfter[phase.helm][1] - helmBefore[phase.helm][1]; n > 0 {
			helm := time.Duration((helmAfter[phase.helm][0] - helmBefore[phase.helm][0]) / n * float64(time.Second))
			b.Logf("%s, ours: Helm's %s took %s on average (the sidecar's metrics, %.0f operations) of the RPC's %s on average",
				phase.name, phase.helm, helm.Round(time.Millisecond), n, mean(phase.times[ours]).Round(time.Millisecond))
		}
		ratio := func(x, y contestant) float64 { return float64(med[x]) / float64(med[y]) }
		b.Logf("%s ratios of the medians: ours/peer %.2f, ours/floor %.2f, peer/floor %.2f",
			phase.name, ratio(ours, peer), ratio(ours, floor), ratio(peer, floor))
		progress("%s: ours %s, peer %s, floor %s; ours/peer %.2f, ours/floor %.2f", phase.name, med[ours], med[peer], med[floor],
			ratio(ours, peer), ratio(ours, floor))
		b.ReportMetric(ratio(ours, peer), phase.name+"-ours/peer")
		b.ReportMetric(ratio(ours, floor), phase.name+"-ours/floor")
	}
	var peak float64
	for _, m := range r.peerRSS {
		peak = max(peak, m)
	}
	b.Logf("peer helm process peak RSS: max %.0f MiB over %d processes", peak, len(r.peerRSS))
	b.ReportMetric(0, "ns/op")
}

// cleanup leaves the stack as found: ours through the driver, the peer's
// with helm uninstall, the floor's objects directly (the Cluster API
// controllers delete what a Cluster owns).
func (r *peerRace) cleanup() {
	b := r.b
	ours := make([]*cluster, 0, len(r.ourClusters))
	for _, c := range r.ourClusters {
		ours = append(ours, c)
	}
	for _, name := range r.peerNames {
		ctx, cancel := r.ctx()
		if err := peerUninstall(ctx, b, r.w, name, r.ns); err != nil {
			b.Error(err)
		}
		cancel()
	}
	ctx, cancel := r.ctx()
	defer cancel()
	for _, o := range r.floorObjects {
		if err := r.w.kube.Delete(ctx, o); err != nil && !strings.Contains(err.Error(), "not found") {
			b.Errorf("deleting floor %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	deleteAll(b, r.driver, ours, 10*time.Minute)
}

// profile, with MAGNUM_CAPI_BENCH_PROFILES set, starts tracing and
// profiling ours for the next 8 s, named after what it is about to do;
// the function it returns waits for both to be written.
func (r *peerRace) profile(name string) func() {
	dir := os.Getenv("MAGNUM_CAPI_BENCH_PROFILES")
	trace := r.proc.trace(dir, "trace-"+name+".out", 8*time.Second)
	cpu := r.proc.cpuProfile(dir, "cpu-"+name+".pprof", 8*time.Second)
	time.Sleep(50 * time.Millisecond) // both started before the RPC
	return func() {
		for _, done := range []<-chan error{trace, cpu} {
			if err := <-done; err != nil {
				r.b.Errorf("profiling ours (%s): %v", name, err)
			}
		}
	}
}
