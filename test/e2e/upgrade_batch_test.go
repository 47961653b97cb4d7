package e2e

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUpgradeHonoursMaxBatchSize: Magnum's upgrade max_batch_size becomes
// how many machines of each node group Cluster API replaces at a time (the
// MachineDeployments' rolling update: maxUnavailable, no surge), where
// before every upgrade rolled one machine at a time whatever the user
// asked.
func TestUpgradeHonoursMaxBatchSize(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "batch", "v1.33.2", 3)
	c.create(t, driver)
	t.Cleanup(func() { c.remove(t, driver) })
	// Magnum upgrades only a cluster in a *_COMPLETE state; upgrading one
	// still being created made this test wait for create and rollout in one
	// 4-minute budget, which a loaded machine outlasted.
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	if got := rollingUpdate(t, c, "default-worker"); got["maxUnavailable"] != int64(1) {
		t.Fatalf("before the upgrade the workers' rolling update is %v, want the chart's maxUnavailable 1", got)
	}

	req := c.upgradeRequest("v1.34.1")
	req.MaxBatchSize = 3
	ctx, cancel := callCtx()
	_, err := driver.UpgradeCluster(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("UpgradeCluster: %v", err)
	}
	if got := rollingUpdate(t, c, "default-worker"); got["maxUnavailable"] != int64(3) || got["maxSurge"] != int64(0) {
		t.Errorf("after an upgrade with max_batch_size 3 the workers' rolling update is %v, want maxUnavailable 3, maxSurge 0", got)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
}

// rollingUpdate is spec.strategy.rollingUpdate of a node group's
// MachineDeployment, as the chart writes it (v1beta1).
func rollingUpdate(t *testing.T, c *cluster, group string) map[string]any {
	t.Helper()
	got, _, _ := unstructured.NestedMap(machineDeploymentAt(t, c, group, "v1beta1").Object, "spec", "strategy", "rollingUpdate")
	return got
}
