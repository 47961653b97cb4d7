package testbed

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRestartAPIServer: with kube-apiserver stopped (gracefully, or
// killed) requests fail; started
// again it serves on the same address with the same certificates (the
// admin client and a user made before the stop still work) and what was
// stored in etcd before.
func TestRestartAPIServer(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "graceful"
		if crash {
			name = "killed"
		}
		t.Run(name, func(t *testing.T) { restartAPIServer(t, crash) })
	}
}

func restartAPIServer(t *testing.T, crash bool) {
	ctx := context.Background()
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "survivor"}, Data: map[string]string{"k": "v"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	_, userCfg, err := env.AddUser("restart-admin-"+t.Name()[len("TestRestartAPIServer/"):], "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	stop := env.StopAPIServer
	if crash {
		stop = env.KillAPIServer
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	down, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = env.Client.Get(down, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	cancel()
	if err == nil {
		t.Error("a request succeeded with kube-apiserver stopped")
	}
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil || got.Data["k"] != "v" {
		t.Fatalf("after the restart: %v, data %v; want the ConfigMap as stored", err, got.Data)
	}
	// A user made before the restart still authenticates (same client CA
	// and serving certificate).
	c, err := client.New(userCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Errorf("a user made before the restart: %v", err)
	}
}
