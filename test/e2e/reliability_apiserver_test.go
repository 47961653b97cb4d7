package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// apiServerDown is how long the management cluster's API server stays
// stopped: long enough for the in-flight create's writes to fail and for
// every watch (the sidecar's cache, the Cluster API controllers) to notice.
const apiServerDown = 5 * time.Second

// TestReliabilityAPIServerRestart kills the management cluster's
// kube-apiserver (SIGKILL: a graceful stop waits up to a minute for
// in-flight requests, so connections would not break mid-write) while a CreateCluster is in flight (right after the
// operation took the cluster's Lease, so the application credential is
// being made in Keystone and nothing else is written yet), and starts it
// again on the same etcd, port and certificates. The call either fails or
// carries on once the API server is back; the create is retried as the
// shim would until it succeeds. The cluster then reaches CREATE_COMPLETE
// through the same sidecar (its watch cache and clients reconnected) with
// one stack_id, a release history without pending revisions ending in the
// one deployed revision, one application credential, the four CA Secrets
// and cloud-credentials, its namespace in the default management cluster
// (and nothing in the second) and no Lease left. After delete,
// nothing of it remains.
func TestReliabilityAPIServerRestart(t *testing.T) {
	kc := stack.Env.Client
	ns := projectNamespace()
	c := newCluster(t, "apirestart", "v1.33.2", 1)
	leasesBefore := leaseNames(t, kc, ns)
	// Another test may have placed a cluster of the project on the second
	// management cluster: what counts is that this create adds nothing there.
	before := footprintOf(t, c.owner())

	// One create as the shim makes it: its first attempt is cut by the
	// outage, its retries run during the outage and after it.
	first := make(chan createResult, 1)
	go func() {
		first <- retryAsTheShim(time.Now().Add(createBudget), func(ctx context.Context) createResult {
			resp, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
			return createResult{stackID: resp.GetStackId(), err: err}
		}, t.Logf)
	}()
	lease := waitNewLease(t, kc, ns, leasesBefore, first)
	t.Logf("create holds Lease %s; killing kube-apiserver for %s", lease, apiServerDown)
	if err := stack.Env.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			if err := stack.Env.StartAPIServer(); err != nil {
				t.Error(err)
			}
		}
	}()
	time.Sleep(apiServerDown)
	if err := stack.Env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped = false

	res := <-first
	stackID := strings.TrimPrefix(lease, kube.LeasePrefix)
	attempts := res.attempts
	for _, m := range res.messages {
		// Tenants read these (status_reason): no address of the management API.
		if host := strings.TrimPrefix(stack.Env.Config.Host, "https://"); strings.Contains(m, host) {
			t.Errorf("a create attempt's message names the management API's address %s: %q", host, m)
		}
	}
	if res.err != nil {
		t.Fatalf("the create failed after %d attempt(s), as the shim would report it: %v", attempts, res.err)
	}
	if res.stackID != stackID {
		t.Fatalf("the create answered stack_id %q, but the Lease was %s", res.stackID, lease)
	}
	c.spec.Cluster.StackId = stackID
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)

	revs := history(t, stack.Env.Config, ns, stackID)
	t.Logf("release history after %d create attempt(s): %s", attempts, statuses(revs))
	if len(revs) == 0 || revs[len(revs)-1].Info.Status.String() != "deployed" {
		t.Errorf("release history %s: want the last revision deployed", statuses(revs))
	}
	for _, r := range revs[:max(len(revs)-1, 0)] {
		if st := r.Info.Status.String(); st != "failed" && st != "superseded" {
			t.Errorf("release history %s: revision %d is %s, want every earlier one failed or superseded", statuses(revs), r.Version, st)
		}
	}
	if len(revs) > attempts {
		t.Errorf("release history %s: more revisions than create attempts (%d)", statuses(revs), attempts)
	}
	if creds := credentialsOf(t, stack.Info.User.ID, c.spec.Cluster.Uuid); len(creds) != 1 {
		t.Errorf("%d application credentials for the cluster, want 1", len(creds))
	}
	var secrets corev1.SecretList
	if err := kc.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"magnum.openstack.org/cluster-uuid": c.spec.Cluster.Uuid}); err != nil {
		t.Fatal(err)
	}
	// The driver's own Secrets; the chart's (addon configuration) and
	// Helm's release records carry the cluster's labels too.
	var names []string
	for _, s := range secrets.Items {
		if s.Labels["app.kubernetes.io/managed-by"] == "Helm" || s.Labels["owner"] == "helm" {
			continue
		}
		names = append(names, strings.TrimPrefix(s.Name, stackID))
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "-ca -cloud-credentials -etcd -proxy -sa"; got != want {
		t.Errorf("the cluster's Secrets: %s, want %s", got, want)
	}
	fp := footprintOf(t, c.owner())
	for _, k := range fp.of(stackID, c.spec.Cluster.Uuid) {
		if strings.HasPrefix(k, harness.SecondManagementClusterName+" ") {
			t.Errorf("an object of the cluster in the second management cluster: %s", k)
		}
		if strings.Contains(k, " Lease ") {
			t.Errorf("a Lease outlived the create: %s", k)
		}
	}
	for _, change := range before.changes(fp) {
		if strings.Contains(change, " Namespace ") && !strings.HasPrefix(change, "added default Namespace "+ns) {
			t.Errorf("the create changed a namespace other than the project's in the default management cluster: %s", change)
		}
	}
	if _, ok := fp["default Namespace "+ns]; !ok {
		t.Errorf("the project's namespace %s is not in the default management cluster", ns)
	}

	c.remove(t, driver)
	if left := footprintOf(t, c.owner()).of(stackID, c.spec.Cluster.Uuid); len(left) > 0 {
		t.Errorf("left after DELETE_COMPLETE:\n%s", strings.Join(left, "\n"))
	}
}

// The shim's retry policy (magnum_capi/client.py, errors.RETRIED, and the
// defaults of [magnum_capi] unavailable_retries and retry_backoff): only
// UNAVAILABLE and ABORTED are retried, after a backoff that doubles, within
// the call's deadline. createBudget stands for create_call_timeout (300 s),
// shortened for the test.
const (
	shimRetries  = 6
	shimBackoff  = 500 * time.Millisecond
	createBudget = 2 * time.Minute
)

// retryAsTheShim makes one call as the shim does: again after a backoff
// while an attempt ends UNAVAILABLE or ABORTED, until the retries or the
// deadline run out. Any other code ends it (Magnum would mark the cluster
// CREATE_FAILED). The result carries the number of attempts and every
// attempt's status message.
func retryAsTheShim(deadline time.Time, call func(context.Context) createResult, logf func(string, ...any)) createResult {
	backoff := shimBackoff
	var messages []string
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		res := call(ctx)
		cancel()
		res.attempts, res.messages = attempt, messages
		logf("attempt %d: stack_id %q, err %v", attempt, res.stackID, res.err)
		if res.err == nil {
			return res
		}
		s, _ := status.FromError(res.err)
		messages = append(messages, s.Message())
		res.messages = messages
		if (s.Code() != codes.Unavailable && s.Code() != codes.Aborted) || attempt > shimRetries || time.Until(deadline) <= backoff {
			return res
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

type createResult struct {
	stackID  string
	err      error
	attempts int
	messages []string
}

func leaseNames(t *testing.T, kc client.Client, ns string) map[string]bool {
	t.Helper()
	var leases coordinationv1.LeaseList
	if err := kc.List(context.Background(), &leases, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range leases.Items {
		out[l.Name] = true
	}
	return out
}

// waitNewLease polls for a cluster Lease that was not there before: the
// create has started its writes. It fails if the create answers first.
func waitNewLease(t *testing.T, kc client.Client, ns string, before map[string]bool, done <-chan createResult) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case r := <-done:
			t.Fatalf("the create answered (%q, %v) before its Lease was seen", r.stackID, r.err)
		default:
		}
		for name := range leaseNames(t, kc, ns) {
			if !before[name] && strings.HasPrefix(name, kube.LeasePrefix+"apirestart-") {
				return name
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no Lease of the create within a minute")
	return ""
}
