package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestSystemPodsWithEmptyWorkers: a cluster whose only worker group is
// autoscaled from zero and starts empty (min_node_count=0, node count 0)
// comes up on the real Cluster API controllers with its control plane
// alone, and the addons whose pods would otherwise wait for a worker (the
// metrics server, the monitoring stack) are told,
// in the values the addon provider installs them with, to tolerate and
// prefer the control plane.
func TestSystemPodsWithEmptyWorkers(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "empty-workers", "v1.33.2", 0)
	for k, v := range map[string]string{"auto_scaling_enabled": "true", "min_node_count": "0", "max_node_count": "2",
		"ingress_controller": "traefik", "monitoring_enabled": "true"} {
		c.spec.Cluster.Labels[k] = v
	}
	stackID := c.create(t, driver)
	cleanupCluster(t, c)

	// The addon objects are written with the release, before any machine.
	// (The test chart renders no ingress addon; traefik's placement is
	// checked in helmvalues.)
	for component, places := range map[string][][]string{
		"metrics-server":        {{}},
		"kube-prometheus-stack": {{"prometheusOperator"}, {"prometheus", "prometheusSpec"}, {"grafana"}},
	} {
		overrides := addonOverrides(t, stackID, component)
		for _, place := range places {
			assertControlPlanePlacement(t, component, place, overrides)
		}
	}
	assertAnnotations(t, c, "default-worker", defaultWorkerAnnotations(0, 2))
	c.waitFor(t, "CREATE_COMPLETE", 4*time.Minute)
	if r := replicas(t, c, "default-worker"); r != 0 {
		t.Errorf("the worker group has %d replicas, want 0 (its minimum)", r)
	}
}

// addonOverrides is the "overrides" values of an addon's HelmRelease, from
// the Secret the addon provider reads them from.
func addonOverrides(t *testing.T, stackID, component string) map[string]any {
	t.Helper()
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: projectNamespace(), Name: stackID + "-" + component + "-config"}
	if err := stack.Env.Client.Get(context.Background(), key, secret); err != nil {
		t.Fatalf("the values Secret of addon %s: %v", component, err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(secret.Data["overrides"], &values); err != nil {
		t.Fatalf("addon %s overrides: %v", component, err)
	}
	return values
}

// assertControlPlanePlacement checks that the pod values at path in values
// tolerate the control plane taint and prefer control plane nodes.
func assertControlPlanePlacement(t *testing.T, component string, path []string, values map[string]any) {
	t.Helper()
	node := values
	for _, key := range path {
		node, _ = node[key].(map[string]any)
	}
	tolerations, _ := node["tolerations"].([]any)
	tolerated := false
	for _, tol := range tolerations {
		m, _ := tol.(map[string]any)
		tolerated = tolerated || (m["key"] == "node-role.kubernetes.io/control-plane" && m["operator"] == "Exists" && m["effect"] == "NoSchedule")
	}
	affinity, _ := node["affinity"].(map[string]any)
	nodeAffinity, _ := affinity["nodeAffinity"].(map[string]any)
	preferred, _ := nodeAffinity["preferredDuringSchedulingIgnoredDuringExecution"].([]any)
	if !tolerated || len(preferred) == 0 {
		t.Errorf("addon %s at %v: tolerations %v, affinity %v; want the control plane tolerated and preferred", component, path, tolerations, affinity)
	}
}
