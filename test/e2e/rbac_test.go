package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// rbacFiles are the roles operators apply to a management cluster.
const rbacFiles = "../../deploy/rbac/*.yaml"

// TestLeastPrivilege runs a sidecar whose Kubernetes identity has nothing
// but deploy/rbac (the test bed authorizes with RBAC) through a cluster's
// whole life: create -> CREATE_COMPLETE -> resize -> UPDATE_COMPLETE ->
// delete -> DELETE_COMPLETE. Any verb the sidecar (or Helm, for the chart's
// objects) needs and the roles lack fails it. The same run, logged at debug
// level with metrics on, is then checked for its metrics and for secrets in
// its logs.
func TestLeastPrivilege(t *testing.T) {
	createAll(t, readObjects(t, rbacFiles))
	// deploy/rbac binds the user "magnum-capi" (a client certificate with
	// CN=magnum-capi); AddUser makes exactly that, with no groups.
	kubeconfig, _, err := stack.Env.AddUser("magnum-capi")
	if err != nil {
		t.Fatal(err)
	}
	sc := startSidecar(t, harness.SidecarOptions{Metrics: true, Configure: withKubeconfig(kubeconfig)})

	c := newCluster(t, "least-privilege", "v1.33.2", 1)
	c.via = sc.Driver
	ctx, cancel := c.callCtx()
	created, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs, CreateTimeout: 60})
	cancel()
	if err != nil {
		t.Fatalf("CreateCluster as the least-privileged user: %v", err)
	}
	c.spec.Cluster.StackId = created.GetStackId()
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	secrets := c.secretsToHide(t)

	worker := c.nodegroup("default-worker")
	worker.NodeCount, worker.Status = 2, "UPDATE_IN_PROGRESS"
	c.spec.Cluster.NodeCount, c.spec.Cluster.Status = 2, "UPDATE_IN_PROGRESS"
	ctx, cancel = c.callCtx()
	_, err = sc.Driver.ResizeCluster(ctx, &pb.ResizeClusterRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: worker.Uuid, NodeCount: 2})
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster as the least-privileged user: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.NodeCount != 2 || len(ng.NodeAddresses) != 2 {
		t.Errorf("after resize: default-worker count %d addresses %v, want 2", ng.NodeCount, ng.NodeAddresses)
	}

	c.spec.Cluster.Status = "DELETE_IN_PROGRESS"
	for _, ng := range c.spec.Nodegroups {
		ng.Status = "DELETE_IN_PROGRESS"
	}
	ctx, cancel = c.callCtx()
	_, err = sc.Driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster as the least-privileged user: %v", err)
	}
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)

	// A refused call, for the error series.
	ctx, cancel = c.callCtx()
	_, err = sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{})
	cancel()
	if err == nil {
		t.Error("an empty CreateCluster was accepted")
	}

	t.Run("metrics", func(t *testing.T) { checkLifecycleMetrics(t, sc) })
	t.Run("logs carry request ids and no secrets", func(t *testing.T) {
		// A debug log of a whole lifecycle has hundreds of lines.
		checkLogs(t, sc.LogFile, c, secrets, 100)
		// The shared sidecar's log so far (other tests' calls), too.
		checkLogs(t, shared.LogFile, nil, secrets, 1)
	})
}

// TestLeastPrivilegeEveryRuleCounts shows TestLeastPrivilege bites: the same
// roles less one rule break the sidecar where that rule is needed.
func TestLeastPrivilegeEveryRuleCounts(t *testing.T) {
	objs := readObjects(t, rbacFiles)
	var role *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			role = o
		}
	}
	if role == nil {
		t.Fatalf("no ClusterRole in %s", rbacFiles)
	}
	tests := []struct {
		name string
		// drop selects the rule to remove by its resources.
		drop string
		// check sees the sidecar fail without the rule.
		check func(t *testing.T, sc *harness.Sidecar)
	}{
		{name: "leases", drop: "leases", check: func(t *testing.T, sc *harness.Sidecar) {
			expectCreateRefused(t, sc, "leases", false)
		}},
		{name: "autoscaler-role", drop: "machinedeployments/scale", check: func(t *testing.T, sc *harness.Sidecar) {
			// Kubernetes refuses to let the sidecar create a Role granting
			// what it does not hold itself.
			expectCreateRefused(t, sc, "attempting to grant RBAC permissions not currently held", true)
		}},
		{name: "machines", drop: "machines", check: func(t *testing.T, sc *harness.Sidecar) {
			// The watch cache cannot list Machines, so it never syncs and
			// the sidecar never says SERVING.
			time.Sleep(10 * time.Second)
			st, err := healthStatus(sc)
			if err != nil || st != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Errorf("health without the machines rule = %v, %v; want NOT_SERVING", st, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := "magnum-capi-without-" + tt.name
			createAll(t, roleWithout(t, role, tt.drop, user))
			kubeconfig, _, err := stack.Env.AddUser(user)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, startSidecar(t, harness.SidecarOptions{Metrics: true, Configure: withKubeconfig(kubeconfig), WaitListening: tt.name == "machines"}))
		})
	}
}

// roleWithout is the ClusterRole less the rule whose resources are exactly
// resource, named and bound for user.
func roleWithout(t *testing.T, role *unstructured.Unstructured, resource, user string) []*unstructured.Unstructured {
	t.Helper()
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var kept []any
	for _, r := range rules {
		resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
		if !(len(resources) == 1 && resources[0] == resource) {
			kept = append(kept, r)
		}
	}
	if len(kept) != len(rules)-1 {
		t.Fatalf("deploy/rbac has no rule for exactly [%s]", resource)
	}
	reduced := role.DeepCopy()
	reduced.SetName(user)
	if err := unstructured.SetNestedSlice(reduced.Object, kept, "rules"); err != nil {
		t.Fatal(err)
	}
	binding := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: `+user+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: `+user+`}
subjects: [{kind: User, apiGroup: rbac.authorization.k8s.io, name: `+user+`}]
`), &binding.Object); err != nil {
		t.Fatal(err)
	}
	return []*unstructured.Unstructured{reduced, binding}
}

// expectCreateRefused creates a cluster through sc and wants the call to
// fail with a Kubernetes refusal mentioning want. If the attempt got far
// enough to leave something behind (cleanup), the shared, fully privileged
// sidecar retries the create, which converges, and deletes the cluster.
func expectCreateRefused(t *testing.T, sc *harness.Sidecar, want string, cleanup bool) {
	t.Helper()
	c := newCluster(t, "refused", "v1.33.2", 1)
	ctx, cancel := c.callCtx()
	_, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs, CreateTimeout: 60})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), want) {
		t.Errorf("CreateCluster without the rule: %v; want a refusal mentioning %q", err, want)
	}
	if !cleanup {
		return
	}
	ctx, cancel = c.callCtx()
	created, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs, CreateTimeout: 60})
	cancel()
	if err != nil {
		t.Fatalf("cleanup: retrying the create with full rights: %v", err)
	}
	c.spec.Cluster.StackId = created.GetStackId()
	c.spec.Cluster.Status = "DELETE_IN_PROGRESS"
	ctx, cancel = c.callCtx()
	_, err = driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("cleanup: DeleteCluster: %v", err)
	}
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)
}

// callCtx is a call deadline carrying the metadata the shim sends, so the
// sidecar's logs can be correlated with Magnum's.
func (c *cluster) callCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := callCtx()
	return metadata.AppendToOutgoingContext(ctx, "x-openstack-request-id", c.ctx.RequestId, "magnum-cluster-uuid", c.spec.Cluster.Uuid), cancel
}

// secretsToHide are the secrets that passed through the sidecar for c: the
// user's token, the CAs' private keys, the application credential's secret
// (read from the cluster's Secret while it exists), and the passwords of the
// user and of the sidecar's service identity.
func (c *cluster) secretsToHide(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"the user's token": c.ctx.AuthToken, "the user's password": stack.Info.User.Password}
	for name, kp := range map[string]*pb.KeyPair{"ca": c.certs.Ca, "etcd ca": c.certs.EtcdCa, "front proxy ca": c.certs.FrontProxyCa, "service account": c.certs.ServiceAccount} {
		out[name+" private key"] = pemBody(kp.GetPrivateKey())
	}
	var creds corev1.Secret
	ns := "magnum-" + strings.ReplaceAll(strings.ToLower(stack.Info.Project.ID), "-", "")
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.spec.Cluster.StackId + "-cloud-credentials"}, &creds); err != nil {
		t.Fatalf("cloud credentials: %v", err)
	}
	var clouds struct {
		Clouds map[string]struct {
			Auth map[string]string `json:"auth"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal(creds.Data["clouds.yaml"], &clouds); err != nil {
		t.Fatal(err)
	}
	for _, cloud := range clouds.Clouds {
		out["the application credential secret"] = cloud.Auth["application_credential_secret"]
	}
	var service struct {
		Clouds map[string]struct {
			Auth map[string]string `json:"auth"`
		} `json:"clouds"`
	}
	raw, err := os.ReadFile(stack.Info.ServiceCloudsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &service); err != nil {
		t.Fatal(err)
	}
	out["the service password"] = service.Clouds[stack.Info.ServiceCloud].Auth["password"]
	for what, s := range out {
		if len(s) < 8 {
			t.Fatalf("%s is %q: too short to look for", what, s)
		}
	}
	return out
}

// pemBody is the longest line of a PEM block's base64 body: what would show
// if a key leaked, whatever the surrounding formatting.
func pemBody(pem string) string {
	lines := strings.Split(pem, "\n")
	slices.SortFunc(lines, func(a, b string) int { return len(b) - len(a) })
	return lines[0]
}
