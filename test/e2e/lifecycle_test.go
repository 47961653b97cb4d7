package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// TestLifecycle is the vertical slice: create -> CREATE_COMPLETE -> delete
// -> DELETE_COMPLETE, through the real gRPC server, Helm, Keystone and the
// test bed, checking every field the shim writes back.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "slice", "v1.33.2", 2)
	stackID := c.create(t, driver)
	if !regexp.MustCompile(`^slice-[a-z2-7]{12}$`).MatchString(stackID) {
		t.Fatalf("stack_id = %q, want slice-<12 base32>", stackID)
	}
	ns := "magnum-" + strings.ReplaceAll(strings.ToLower(stack.Info.Project.ID), "-", "")

	// Right after create nothing is provisioned yet: the status must say so.
	ctx, cancel := callCtx()
	first, err := driver.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("GetClusterStatus: %v", err)
	}
	if got := first.GetStatus().GetStatus(); got != "CREATE_IN_PROGRESS" || first.GetStatus().GetStatusReason() == "" {
		t.Errorf("status right after create = %s (%q), want CREATE_IN_PROGRESS with a reason", got, first.GetStatus().GetStatusReason())
	}

	// Create is idempotent: a retry (the shim's, after a lost answer) names
	// the same release and changes nothing.
	ctx, cancel = callCtx()
	again, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil || again.GetStackId() != stackID {
		t.Fatalf("retried CreateCluster = %v, %v; want %s", again.GetStackId(), err, stackID)
	}

	kc := stack.Env.Client
	for _, suffix := range []string{"-ca", "-etcd", "-proxy", "-sa"} {
		var s corev1.Secret
		if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + suffix}, &s); err != nil {
			t.Fatalf("secret %s%s: %v", stackID, suffix, err)
		}
		if s.Type != "cluster.x-k8s.io/secret" || len(s.Data["tls.crt"]) == 0 || len(s.Data["tls.key"]) == 0 ||
			s.Labels["cluster.x-k8s.io/cluster-name"] != stackID || s.Labels["magnum.openstack.org/cluster-uuid"] != c.spec.Cluster.Uuid {
			t.Errorf("secret %s: type %q labels %v keys %d", s.Name, s.Type, s.Labels, len(s.Data))
		}
	}
	var creds corev1.Secret
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-cloud-credentials"}, &creds); err != nil {
		t.Fatalf("cloud credentials secret: %v", err)
	}
	if !strings.Contains(string(creds.Data["clouds.yaml"]), "application_credential_id") {
		t.Errorf("clouds.yaml holds no application credential:\n%s", creds.Data["clouds.yaml"])
	}

	start := time.Now()
	transitions := c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	t.Logf("CREATE_COMPLETE after %s, transitions %v", time.Since(start).Round(time.Millisecond), transitions)
	// The test bed's API load balancer is the cluster's in-memory API
	// server, listening on 127.0.0.1 at a port chosen at run time.
	if !regexp.MustCompile(`^https://127\.0\.0\.1:[0-9]+$`).MatchString(c.spec.Cluster.ApiAddress) {
		t.Errorf("api_address = %q", c.spec.Cluster.ApiAddress)
	}
	if c.spec.Cluster.CoeVersion != "v1.33.2" {
		t.Errorf("coe_version = %q", c.spec.Cluster.CoeVersion)
	}
	for name, want := range map[string]int32{"default-master": 1, "default-worker": 2} {
		ng := c.nodegroup(name)
		if ng.Status != "CREATE_COMPLETE" || ng.NodeCount != want || len(ng.NodeAddresses) != int(want) {
			t.Errorf("%s: status %s count %d addresses %v", name, ng.Status, ng.NodeCount, ng.NodeAddresses)
		}
	}

	var capi clusterv1.Cluster
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID}, &capi); err != nil {
		t.Fatalf("CAPI Cluster: %v", err)
	}

	c.spec.Cluster.Status = "DELETE_IN_PROGRESS"
	for _, ng := range c.spec.Nodegroups {
		ng.Status = "DELETE_IN_PROGRESS"
	}
	ctx, cancel = callCtx()
	_, err = driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)
	assertNothingLeft(t, c, ns)
}
