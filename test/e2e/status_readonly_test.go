package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestStatusWithAReadOnlyIdentity: the status path makes no write. A
// sidecar whose Kubernetes identity may only get, list and watch, and whose
// OpenStack identity is of another project (Keystone refuses it every write
// in the cluster's), with the Argo CD hand-off on, answers every status
// poll of a cluster's whole life: created and complete, registered with
// Argo CD, deleted while a leftover the garbage collector has not removed
// keeps the cleanup waiting, its cleanup marker gone as if an earlier
// sidecar had deleted it, and DELETE_COMPLETE. Every write it attempted is
// one of its reconcilers' (refused): none is its status path's. A sidecar
// with the same hand-off and full rights does the writes, its reconcilers
// the hand-off and the cleanup.
func TestStatusWithAReadOnlyIdentity(t *testing.T) {
	t.Parallel()
	ensureNamespace(t, argoCDNamespace)
	handOff := func(c *config.Config) {
		c.ArgoCD = config.ArgoCD{Enabled: true, RegisterByDefault: true, Namespace: argoCDNamespace, Project: argoCDProject}
	}
	writer := startSidecar(t, harness.SidecarOptions{Name: "read-only-writer", Configure: handOff})
	writes := &writeRecorder{}
	readOnly := startSidecar(t, harness.SidecarOptions{Name: "read-only", KubeTransport: writes.wrap, Configure: func(c *config.Config) {
		readOnlyIdentity(t)(c)
		handOff(c)
	}})
	c := newCluster(t, "read-only", "v1.33.2", 1)
	stackID := c.create(t, writer.Driver)
	c.waitOn(t, readOnly.Driver, "CREATE_COMPLETE", 3*time.Minute)
	// The first complete poll that reaches the writer offers it the facts.
	c.waitOn(t, writer.Driver, "CREATE_COMPLETE", time.Minute)
	c.via = readOnly.Driver
	checkArgoSecret(t, c, argoSecret(t, c, func(*corev1.Secret) bool { return true }))

	ns := projectNamespace()
	leftover := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: stackID + "-leftover", Labels: map[string]string{kube.ChartClusterLabel: stackID}}}
	if err := stack.Env.Client.Create(context.Background(), leftover); err != nil {
		t.Fatal(err)
	}
	c.setStatus("DELETE_IN_PROGRESS")
	ctx, cancel := callCtx()
	_, err := writer.Driver.DeleteCluster(ctx, &pb.DeleteClusterRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	waitForReason(t, readOnly.Driver, c, leftover.Name, 3*time.Minute)
	if c.spec.Cluster.Status != "DELETE_IN_PROGRESS" {
		t.Errorf("with a leftover: %s (%s), want DELETE_IN_PROGRESS", c.spec.Cluster.Status, c.spec.Cluster.StatusReason)
	}
	if id := authenticates(t, credentialSecret(t, ns, stackID)); !inKeystone(t, id) {
		t.Errorf("credential %s deleted before Cluster API's leftovers are gone", id)
	}
	if s := getArgoSecret(t, c); s != nil {
		t.Errorf("Argo CD Secret %s left after the deletion started", s.Name)
	}
	// An earlier sidecar wrote no cleanup marker: the writer's status poll
	// offers the cluster to its cleanup reconciler.
	for _, o := range []client.Object{leftover, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: stackID + "-cleanup"}}} {
		if err := stack.Env.Client.Delete(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	c.waitOn(t, writer.Driver, "DELETE_COMPLETE", 3*time.Minute)
	c.waitOn(t, readOnly.Driver, "DELETE_COMPLETE", time.Minute)
	assertNothingLeft(t, c, ns)
	for _, w := range writes.seen() {
		if !reconcilersWrite(w, ns) {
			t.Errorf("the read-only sidecar attempted %s: not a reconciler's write", w)
		}
	}
}

// reconcilersWrite: w (method and path) is a write the read-only sidecar's
// reconcilers attempt on the Secrets they own: the hand-off's Argo CD
// Secret and its record, the cleanup's marker (written for an earlier
// sidecar's deletion, or recording Keystone's refusal). Any cluster of the
// namespace counts: the parallel tests' clusters share it, and the
// sidecar's reconcilers see their events too. Before it deletes a
// cluster's Secrets the cleanup binds the sidecar's role in the namespace
// (a namespace an older sidecar made has no binding of ours), asking first
// who the sidecar is.
func reconcilersWrite(w, ns string) bool {
	method, uri, _ := strings.Cut(w, " ")
	path, _, _ := strings.Cut(uri, "?")
	if method == http.MethodPost {
		return path == "/apis/authentication.k8s.io/v1/selfsubjectreviews" ||
			path == "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings"
	}
	if method != http.MethodPatch && method != http.MethodDelete {
		return false
	}
	if name, ok := strings.CutPrefix(path, "/api/v1/namespaces/"+argoCDNamespace+"/secrets/"); ok {
		return strings.HasPrefix(name, "magnum-")
	}
	name, ok := strings.CutPrefix(path, "/api/v1/namespaces/"+ns+"/secrets/")
	return ok && (strings.HasSuffix(name, "-argocd") || strings.HasSuffix(name, "-cleanup"))
}

// writeRecorder records the write requests (method and path) of a
// sidecar's Kubernetes client.
type writeRecorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *writeRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return statusRoundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			r.mu.Lock()
			r.writes = append(r.writes, req.Method+" "+req.URL.RequestURI())
			r.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

func (r *writeRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// waitForReason polls d until c's status_reason names want.
func waitForReason(t *testing.T, d pb.DriverServiceClient, c *cluster, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(harness.Patience(timeout))
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := callCtx()
		resp, err := d.GetClusterStatus(ctx, &pb.GetClusterStatusRequest{Spec: c.spec})
		cancel()
		if err != nil {
			t.Fatalf("GetClusterStatus: %v", err)
		}
		c.apply(resp.GetStatus())
		if strings.Contains(c.spec.Cluster.StatusReason, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s (%s) after %s, want a reason naming %s", c.spec.Cluster.Status, c.spec.Cluster.StatusReason, timeout, want)
		}
		<-tick.C
	}
}

// readOnlyIdentity configures a sidecar as a Kubernetes user bound only to
// get, list and watch what status reads, and as an OpenStack user of
// another project.
func readOnlyIdentity(t *testing.T) func(*config.Config) {
	t.Helper()
	const user = "magnum-capi-read-only"
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "namespaces"}, Verbs: read},
		{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"clusters", "machinedeployments", "machines"}, Verbs: read},
		{APIGroups: []string{"controlplane.cluster.x-k8s.io"}, Resources: []string{"kubeadmcontrolplanes"}, Verbs: read},
		{APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"openstackclusters", "openstackservers", "openstackmachinetemplates"}, Verbs: read},
		{APIGroups: []string{"bootstrap.cluster.x-k8s.io"}, Resources: []string{"kubeadmconfigtemplates"}, Verbs: read},
		{APIGroups: []string{"addons.stackhpc.com"}, Resources: []string{"helmreleases", "manifests"}, Verbs: read},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: read},
	}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := stack.Env.Client.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig, _, err := stack.Env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	cloudsFile := foreignServiceIdentity(t, "read-only-clouds.yaml")
	return func(c *config.Config) {
		c.ManagementClusters = c.ManagementClusters[:1]
		c.ManagementClusters[0].Kubeconfig = kubeconfig
		c.OpenStack.CloudsFile = cloudsFile
	}
}

// foreignServiceIdentity writes a clouds.yaml (file, in the stack's
// directory) of a new user who is a member of a new project only: Keystone
// refuses it everything in the test project.
func foreignServiceIdentity(t *testing.T, file string) string {
	t.Helper()
	service, err := stack.Keystone.CreateProject(context.Background(), "service-"+time.Now().Format("150405.000"))
	if err != nil {
		t.Fatal(err)
	}
	weak, err := stack.Keystone.CreateUser(context.Background(), "magnum-"+service.Name, service, "member")
	if err != nil {
		t.Fatal(err)
	}
	cloudsFile := filepath.Join(stack.Info.Dir, file)
	if err := stack.Keystone.WriteCloudsYAML(cloudsFile, stack.Info.ServiceCloud, weak); err != nil {
		t.Fatal(err)
	}
	return cloudsFile
}
