package e2e

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// rbacFiles are the roles operators apply to a management cluster.
const rbacFiles = "../../deploy/rbac/*.yaml"

// TestLeastPrivilege runs a sidecar whose Kubernetes identity has nothing
// but deploy/rbac (the test bed authorizes with RBAC and admits with
// ValidatingAdmissionPolicies), applied as its README says, through a
// cluster's whole life: create -> CREATE_COMPLETE -> resize ->
// UPDATE_COMPLETE -> upgrade -> UPDATE_COMPLETE -> delete ->
// DELETE_COMPLETE. Any verb the sidecar (or Helm, for the chart's objects)
// needs and the roles lack fails it. Then that identity is shown unable to
// write outside the project namespaces (outsideProjectNamespaces). The same
// run, logged at debug level with metrics on, is checked for its metrics
// and for secrets in its logs.
func TestLeastPrivilege(t *testing.T) {
	createAll(t, readObjects(t, rbacFiles))
	// deploy/rbac binds the user "magnum-capi" (a client certificate with
	// CN=magnum-capi); AddUser makes exactly that, with no groups.
	kubeconfig, userCfg, err := stack.Env.AddUser("magnum-capi")
	if err != nil {
		t.Fatal(err)
	}
	waitForPolicy(t, userCfg)
	sc := startSidecar(t, harness.SidecarOptions{Metrics: true, Configure: withKubeconfig(kubeconfig)})

	c := newCluster(t, "least-privilege", "v1.33.2", 1)
	c.via = sc.Driver
	ctx, cancel := c.callCtx()
	created, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil {
		t.Fatalf("CreateCluster as the least-privileged user: %v", err)
	}
	c.spec.Cluster.StackId = created.GetStackId()
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	secrets := c.secretsToHide(t)
	leastPrivilegeResize(t, sc, c)
	leastPrivilegeUpgrade(t, sc, c)
	t.Run("the project namespace enforces pod security", func(t *testing.T) { leastPrivilegePodSecurity(t, c) })

	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel = c.callCtx()
	_, err = sc.Driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster as the least-privileged user: %v", err)
	}
	c.waitFor(t, "DELETE_COMPLETE", 3*time.Minute)
	assertNothingLeft(t, c, projectNamespace())

	// A refused call, for the error series.
	ctx, cancel = c.callCtx()
	_, err = sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{})
	cancel()
	if err == nil {
		t.Error("an empty CreateCluster was accepted")
	}

	t.Run("its rights come from its RoleBinding in the project namespace", func(t *testing.T) {
		var rb rbacv1.RoleBinding
		if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: projectNamespace(), Name: "magnum-capi-namespace:magnum-capi"}, &rb); err != nil {
			t.Fatalf("the sidecar's RoleBinding: %v", err)
		}
		if rb.RoleRef.Name != "magnum-capi-namespace" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "magnum-capi" {
			t.Errorf("the sidecar's RoleBinding binds %s to %v, want magnum-capi-namespace to magnum-capi", rb.RoleRef.Name, rb.Subjects)
		}
	})
	t.Run("no writes outside project namespaces", func(t *testing.T) { outsideProjectNamespaces(t, userCfg) })
	t.Run("metrics", func(t *testing.T) { checkLifecycleMetrics(t, sc) })
	t.Run("logs carry request ids and no secrets", func(t *testing.T) {
		// A debug log of a whole lifecycle has hundreds of lines.
		checkLogs(t, sc.LogFile, c, secrets, 100)
		// The shared sidecar's log so far (other tests' calls), too.
		checkLogs(t, shared.LogFile, nil, secrets, 1)
	})
}

// leastPrivilegeResize resizes c's workers to 2 through sc.
func leastPrivilegeResize(t *testing.T, sc *harness.Sidecar, c *cluster) {
	t.Helper()
	worker := c.nodegroup("default-worker")
	worker.NodeCount, worker.Status = 2, "UPDATE_IN_PROGRESS"
	c.spec.Cluster.NodeCount, c.spec.Cluster.Status = 2, "UPDATE_IN_PROGRESS"
	ctx, cancel := c.callCtx()
	_, err := sc.Driver.ResizeCluster(ctx, &pb.ResizeClusterRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: worker.Uuid, NodeCount: 2})
	cancel()
	if err != nil {
		t.Fatalf("ResizeCluster as the least-privileged user: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if ng := c.nodegroup("default-worker"); ng.NodeCount != 2 || len(ng.NodeAddresses) != 2 {
		t.Errorf("after resize: default-worker count %d addresses %v, want 2", ng.NodeCount, ng.NodeAddresses)
	}
}

// leastPrivilegeUpgrade upgrades c to a v1.34.1 template through sc.
func leastPrivilegeUpgrade(t *testing.T, sc *harness.Sidecar, c *cluster) {
	t.Helper()
	ctx, cancel := c.callCtx()
	_, err := sc.Driver.UpgradeCluster(ctx, c.upgradeRequest("v1.34.1"))
	cancel()
	if err != nil {
		t.Fatalf("UpgradeCluster as the least-privileged user: %v", err)
	}
	c.waitFor(t, "UPDATE_COMPLETE", 4*time.Minute)
	var kcp unstructured.Unstructured
	kcp.SetGroupVersionKind(schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmControlPlane"})
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: projectNamespace(), Name: c.spec.Cluster.StackId + "-control-plane"}, &kcp); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(kcp.Object, "spec", "version"); v != "v1.34.1" {
		t.Errorf("after the upgrade the control plane's version is %q, want v1.34.1", v)
	}
}

// leastPrivilegePodSecurity: the project namespace the sidecar made (or
// labelled) enforces Pod Security baseline and warns and audits at
// restricted; the test bed's PodSecurity admission admits the chart's
// cluster-autoscaler pod (its Deployment's template, as the chart rendered
// it, the one workload the chart runs in a project namespace) and refuses
// a privileged pod there (server-side dry runs); Pod Security restricted
// would refuse the autoscaler pod.
func leastPrivilegePodSecurity(t *testing.T, c *cluster) {
	ctx, ns := context.Background(), projectNamespace()
	var got corev1.Namespace
	if err := stack.Env.Client.Get(ctx, client.ObjectKey{Name: ns}, &got); err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]string{kube.PodSecurityEnforceLabel: "baseline", "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted"} {
		if got.Labels[label] != want {
			t.Errorf("namespace %s: label %s = %q, want %q", ns, label, got.Labels[label], want)
		}
	}
	var autoscaler appsv1.Deployment
	if err := stack.Env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.spec.Cluster.StackId + "-autoscaler"}, &autoscaler); err != nil {
		t.Fatalf("the chart's autoscaler Deployment: %v", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "autoscaler-"}, Spec: autoscaler.Spec.Template.Spec}
	if err := stack.Env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Errorf("the chart's autoscaler pod in %s: %v; want admitted", ns, err)
	}
	// "restricted" would refuse it: baseline is the strictest level the
	// chart's workload passes.
	strict := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-", Labels: map[string]string{kube.PodSecurityEnforceLabel: "restricted"}}}
	if err := stack.Env.Client.Create(ctx, strict); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stack.Env.Client.Delete(ctx, strict) }()
	pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: strict.Name, GenerateName: "autoscaler-"}, Spec: autoscaler.Spec.Template.Spec}
	if err := stack.Env.Client.Create(ctx, pod, client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "seccompProfile") {
		t.Errorf("the chart's autoscaler pod under Pod Security restricted: %v; want refused for its seccomp profile (else enforce restricted)", err)
	}
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "privileged-"}, Spec: corev1.PodSpec{
		HostPID:    true,
		Containers: []corev1.Container{{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
	}}
	if err := stack.Env.Client.Create(ctx, privileged, client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a privileged pod in %s: %v; want refused by PodSecurity", ns, err)
	}
}

// outsideProjectNamespaces: the identity deploy/rbac binds cannot start a
// pod or Deployment, bind a role, write a Secret or make a namespace outside
// the project namespaces: RBAC refuses the first (SubjectAccessReview says
// so) and every attempt is refused.
func outsideProjectNamespaces(t *testing.T, userCfg *rest.Config) {
	for _, a := range []authorizationv1.ResourceAttributes{
		{Namespace: "default", Verb: "create", Group: "apps", Resource: "deployments"},
		{Namespace: "kube-system", Verb: "create", Resource: "pods"},
		{Namespace: "default", Verb: "create", Resource: "secrets"},
		{Namespace: "default", Verb: "update", Resource: "secrets"},
		{Namespace: "kube-system", Verb: "delete", Resource: "secrets"},
		{Namespace: "default", Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "roles"},
		{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
		{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "cluster-admin"},
		{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		{Verb: "delete", Resource: "namespaces", Name: "default"},
		{Verb: "get", Resource: "secrets", Namespace: "kube-system", Name: "anything"},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "magnum-capi", ResourceAttributes: &a}}
		if err := stack.Env.Client.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed {
			t.Errorf("RBAC allows magnum-capi to %s %s %q in %q", a.Verb, a.Resource, a.Name, a.Namespace)
		}
	}
	uc, err := client.New(userCfg, client.Options{Scheme: stack.Env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range attemptsOutside() {
		err := uc.Create(context.Background(), obj)
		if !apierrors.IsForbidden(err) {
			t.Errorf("magnum-capi creating %T %s/%s: %v; want forbidden", obj, obj.GetNamespace(), obj.GetName(), err)
			_ = stack.Env.Client.Delete(context.Background(), obj)
		}
	}
	insideNewProjectNamespace(t, uc)
}

// insideNewProjectNamespace: the same identity may make a new project's
// namespace and bind itself there, as its first cluster in a project does:
// the admission policy lets project namespaces through.
func insideNewProjectNamespace(t *testing.T, uc client.Client) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "magnum-" + strings.ReplaceAll(uuid.NewString(), "-", ""),
		Labels: map[string]string{kube.PodSecurityEnforceLabel: "baseline"}}}
	if err := uc.Create(context.Background(), ns); err != nil {
		t.Fatalf("magnum-capi creating namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() { _ = stack.Env.Client.Delete(context.Background(), ns) })
	rb := attemptsOutside()[0].(*rbacv1.RoleBinding)
	rb.Namespace = ns.Name
	if err := uc.Create(context.Background(), rb); err != nil {
		t.Errorf("magnum-capi binding magnum-capi-namespace in %s: %v", ns.Name, err)
	}
}

// attemptsOutside are writes outside the project namespaces; the
// RoleBinding is the one RBAC allows (creating RoleBindings anywhere, and
// binding magnum-capi-namespace), refused by deploy/rbac's admission policy.
func attemptsOutside() []client.Object {
	meta := metav1.ObjectMeta{Namespace: "default", Name: "magnum-capi-outside"}
	labels := map[string]string{"app": "outside"}
	return []client.Object{
		&rbacv1.RoleBinding{ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "magnum-capi-namespace"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "magnum-capi"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "magnum-capi-outside"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "magnum-capi-namespace"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "magnum-capi"}}},
		&corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"k": "v"}},
		&corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "not-a-magnum-project"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "magnum-capi-system-2"}},
	}
}

// waitForPolicy waits until the API server enforces deploy/rbac's admission
// policy (it loads new policies asynchronously), probing with a RoleBinding
// the user's RBAC allows outside the project namespaces.
func waitForPolicy(t *testing.T, userCfg *rest.Config) {
	t.Helper()
	uc, err := client.New(userCfg, client.Options{Scheme: stack.Env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe := attemptsOutside()[0].(*rbacv1.RoleBinding)
		probe.Name = "magnum-capi-policy-probe"
		err := uc.Create(context.Background(), probe)
		if err == nil {
			_ = stack.Env.Client.Delete(context.Background(), probe)
		}
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "only in project namespaces") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deploy/rbac's admission policy is not enforced after 30 s: a RoleBinding in default: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestLeastPrivilegeEveryRuleCounts shows TestLeastPrivilege bites: the same
// roles less one rule break the sidecar where that rule is needed.
func TestLeastPrivilegeEveryRuleCounts(t *testing.T) {
	objs := readObjects(t, rbacFiles)
	tests := []struct {
		name string
		// drop selects the rule to remove: from the ClusterRole named role,
		// the rule whose resources are exactly drop.
		role, drop string
		// check sees the sidecar fail without the rule.
		check func(t *testing.T, sc *harness.Sidecar)
	}{
		{name: "leases", role: "magnum-capi-namespace", drop: "leases", check: func(t *testing.T, sc *harness.Sidecar) {
			expectCreateRefused(t, sc, "leases", false)
		}},
		{name: "autoscaler-role", role: "magnum-capi-namespace", drop: "machinedeployments/scale", check: func(t *testing.T, sc *harness.Sidecar) {
			// Kubernetes refuses to let the sidecar create a Role granting
			// what it does not hold itself.
			expectCreateRefused(t, sc, "may not grant permissions it does not hold itself", true)
		}},
		{name: "bind", role: "magnum-capi", drop: "clusterroles", check: func(t *testing.T, sc *harness.Sidecar) {
			// Without "bind" the sidecar cannot grant itself its rights
			// in the project namespace.
			expectCreateRefused(t, sc, "may not grant permissions it does not hold itself", false)
		}},
		{name: "machines", role: "magnum-capi", drop: "machines", check: func(t *testing.T, sc *harness.Sidecar) {
			// The watch cache cannot list Machines, so it never syncs and
			// the sidecar never says SERVING. Asked once the sidecar has
			// logged the refused listing: before that, NOT_SERVING could
			// still mean "not synced yet".
			waitForLog(t, sc.LogFile, "listing or watching failed", "machines", "forbidden")
			st, err := healthStatus(sc)
			if err != nil || st != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Errorf("health without the machines rule = %v, %v; want NOT_SERVING", st, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := "magnum-capi-without-" + tt.name
			createAll(t, rolesWithout(t, objs, tt.role, tt.drop, user))
			kubeconfig, _, err := stack.Env.AddUser(user)
			if err != nil {
				t.Fatal(err)
			}
			configure := func(c *config.Config) {
				withKubeconfig(kubeconfig)(c)
				c.ManagementClusters[0].NamespaceClusterRole = user + "-namespace"
			}
			tt.check(t, startSidecar(t, harness.SidecarOptions{Metrics: true, Configure: configure, WaitListening: tt.name == "machines"}))
		})
	}
}

// rolesWithout are deploy/rbac's two ClusterRoles for user (named user and
// user-namespace, the first allowed to bind the second), the ClusterRole
// named role less the rule whose resources are exactly resource, and the
// ClusterRoleBinding of the first to user.
func rolesWithout(t *testing.T, objs []*unstructured.Unstructured, role, resource, user string) []*unstructured.Unstructured {
	t.Helper()
	names := map[string]string{"magnum-capi": user, "magnum-capi-namespace": user + "-namespace"}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" || names[o.GetName()] == "" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		var kept []any
		for _, r := range rules {
			rule := r.(map[string]any)
			resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
			if o.GetName() == role && len(resources) == 1 && resources[0] == resource {
				continue
			}
			if names, ok, _ := unstructured.NestedStringSlice(rule, "resourceNames"); ok && slices.Equal(names, []string{"magnum-capi-namespace"}) {
				rule["resourceNames"] = []any{user + "-namespace"}
			}
			kept = append(kept, rule)
		}
		if o.GetName() == role && len(kept) != len(rules)-1 {
			t.Fatalf("deploy/rbac's ClusterRole %s has no rule for exactly [%s]", role, resource)
		}
		reduced := o.DeepCopy()
		reduced.SetName(names[o.GetName()])
		if err := unstructured.SetNestedSlice(reduced.Object, kept, "rules"); err != nil {
			t.Fatal(err)
		}
		out = append(out, reduced)
	}
	if len(out) != 2 {
		t.Fatalf("deploy/rbac has %d of the ClusterRoles magnum-capi and magnum-capi-namespace", len(out))
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
	return append(out, binding)
}

// expectCreateRefused creates a cluster through sc and wants the call to
// fail with a Kubernetes refusal mentioning want. If the attempt got far
// enough to leave something behind (cleanup), the shared, fully privileged
// sidecar retries the create, which converges, and deletes the cluster.
func expectCreateRefused(t *testing.T, sc *harness.Sidecar, want string, cleanup bool) {
	t.Helper()
	c := newCluster(t, "refused", "v1.33.2", 1)
	ctx, cancel := c.callCtx()
	_, err := sc.Driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), want) {
		t.Errorf("CreateCluster without the rule: %v; want a refusal mentioning %q", err, want)
	}
	if !cleanup {
		return
	}
	ctx, cancel = c.callCtx()
	created, err := driver.CreateCluster(ctx, &pb.CreateClusterRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
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

// waitForLog waits up to a minute for a line of the sidecar's log holding
// every one of words.
func waitForLog(t *testing.T, logFile string, words ...string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		data, err := os.ReadFile(logFile)
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if containsAll(line, words) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no line of %s holds %q: %v", logFile, words, err)
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
