package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestKilledSidecarRecovered: a sidecar process is SIGKILLed in the middle
// of an upgrade, after Helm recorded the new revision as pending-upgrade and
// before it wrote any Cluster API object, holding the cluster's Lease. The
// next operation, through another sidecar, waits for the dead one's Lease
// to expire, takes it over, marks the interrupted revision failed, and
// upgrades; the cluster then settles with the new size.
func TestKilledSidecarRecovered(t *testing.T) {
	const lockTTL = 5 * time.Second
	c := newCluster(t, "crash", "v1.33.2", 1)
	stackID := c.create(t, driver)
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	ns := projectNamespace()
	before := history(t, stack.Env.Config, ns, stackID)

	// The victim reaches the first management cluster through a proxy that
	// holds its first write of a Cluster API object: Helm's release record
	// (a core Secret) is written by then, the chart's Cluster API objects
	// are not. (Writes before it, such as the Lease and the sidecar's
	// SelfSubjectReview and RoleBinding in the namespace, pass.)
	proxy := startKubeProxy(t, stack.Env.Config)
	victim := startSidecar(t, harness.SidecarOptions{Name: "victim", Binary: sidecarBinary(t),
		Configure: withKubeconfig(proxy.kubeconfig(t, "victim")), Env: []string{"MAGNUM_CAPI_TIMEOUTS_LOCK=" + lockTTL.String()}})
	trapped := proxy.arm(func(r *http.Request) bool {
		return r.Method != http.MethodGet && strings.HasPrefix(r.URL.Path, "/apis/") &&
			strings.Contains(r.URL.Path, "cluster.x-k8s.io/")
	})
	resize := c.resizeRequest(2)
	callDone := make(chan error, 1)
	go func() {
		ctx, cancel := callCtx()
		defer cancel()
		_, err := victim.Driver.ResizeCluster(ctx, resize)
		callDone <- err
	}()
	var held *http.Request
	select {
	case held = <-trapped:
	case err := <-callDone:
		t.Fatalf("the resize finished (%v) without writing a Cluster API object", err)
	case <-time.After(45 * time.Second):
		t.Fatal("the victim never wrote a Cluster API object")
	}
	t.Logf("holding %s %s; killing the sidecar", held.Method, held.URL.Path)

	revs := history(t, stack.Env.Config, ns, stackID)
	last := revs[len(revs)-1]
	if last.Version != before[len(before)-1].Version+1 || last.Info.Status.String() != "pending-upgrade" {
		t.Fatalf("before the kill the newest revision is %d %s, want %d pending-upgrade (history %s)",
			last.Version, last.Info.Status, before[len(before)-1].Version+1, statuses(revs))
	}
	var lease coordinationv1.Lease
	leaseKey := client.ObjectKey{Namespace: ns, Name: kube.LeasePrefix + stackID}
	if err := stack.Env.Client.Get(context.Background(), leaseKey, &lease); err != nil {
		t.Fatalf("the victim's lease: %v", err)
	}
	deadHolder := *lease.Spec.HolderIdentity

	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := <-callDone; err == nil {
		t.Fatal("the killed sidecar's resize reported success")
	}
	if err := stack.Env.Client.Get(context.Background(), leaseKey, &lease); err != nil || *lease.Spec.HolderIdentity != deadHolder {
		t.Fatalf("after the kill the lease is %v (%v), want still held by %s", lease.Spec.HolderIdentity, err, deadHolder)
	}
	expires := lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)

	// The same resize, retried through the shared sidecar.
	leases := watchLeases(t, stack.Env.Config, ns)
	ctx, cancel := callCtx()
	_, err := driver.ResizeCluster(ctx, c.resizeRequest(2))
	cancel()
	if err != nil {
		t.Fatalf("the resize after the kill: %v", err)
	}
	finished := time.Now()
	if finished.Before(expires) {
		t.Errorf("the next operation finished at %s, before the dead sidecar's lease expired at %s", finished, expires)
	}
	t.Logf("recovered %s after the kill (lease TTL %s)", finished.Sub(killed).Round(100*time.Millisecond), lockTTL)

	revs = history(t, stack.Env.Config, ns, stackID)
	n := len(revs)
	interrupted, recovered := revs[n-2], revs[n-1]
	if interrupted.Version != last.Version || interrupted.Info.Status.String() != "failed" ||
		!strings.Contains(interrupted.Info.Description, "marked failed by magnum-capi") {
		t.Errorf("interrupted revision %d: %s %q, want failed and marked by magnum-capi", interrupted.Version, interrupted.Info.Status, interrupted.Info.Description)
	}
	if recovered.Version != last.Version+1 || recovered.Info.Status.String() != "deployed" {
		t.Errorf("history after recovery %s, want revision %d deployed", statuses(revs), last.Version+1)
	}
	holders := leases.holders(leaseKey.Name)
	if len(holders) < 2 || holders[0] != deadHolder || holders[len(holders)-1] == deadHolder {
		t.Errorf("lease holders seen %v: want the dead sidecar's, then the one that took it over", holders)
	}
	if err := stack.Env.Client.Get(context.Background(), leaseKey, &lease); err == nil {
		t.Errorf("the lease outlived the recovering operation (holder %s)", *lease.Spec.HolderIdentity)
	}

	c.waitOn(t, driver, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.NodeCount != 2 || len(ng.NodeAddresses) != 2 {
		t.Errorf("after recovery the workers are %d (%v), want 2", ng.NodeCount, ng.NodeAddresses)
	}
	c.remove(t, driver)
}
