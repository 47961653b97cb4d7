package e2e

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rbacClaim is one sentence of deploy/rbac/README.md about the sidecar's
// identity (the user magnum-capi) and the answer RBAC alone gives
// (SubjectAccessReview: no admission policy takes part).
type rbacClaim struct {
	claim string
	attr  authorizationv1.ResourceAttributes
	allow bool
}

// rbacAloneClaims are README.md's "With RBAC alone" sentences.
func rbacAloneClaims() []rbacClaim {
	const rbacGroup = rbacv1.GroupName
	return []rbacClaim{
		{"it may create namespaces of any name", authorizationv1.ResourceAttributes{Verb: "create", Resource: "namespaces"}, true},
		{"it may patch any namespace (labels)", authorizationv1.ResourceAttributes{Verb: "patch", Resource: "namespaces", Name: "default"}, true},
		{"it may not update, delete or list namespaces", authorizationv1.ResourceAttributes{Verb: "delete", Resource: "namespaces", Name: "default"}, false},
		{"it may not update namespaces", authorizationv1.ResourceAttributes{Verb: "update", Resource: "namespaces", Name: "default"}, false},
		{"it may not list namespaces", authorizationv1.ResourceAttributes{Verb: "list", Resource: "namespaces"}, false},
		{"it may create RoleBindings in any namespace", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "create", Group: rbacGroup, Resource: "rolebindings"}, true},
		{"it may bind the ClusterRole magnum-capi-namespace", authorizationv1.ResourceAttributes{Verb: "bind", Group: rbacGroup, Resource: "clusterroles", Name: "magnum-capi-namespace"}, true},
		{"it may bind no other ClusterRole", authorizationv1.ResourceAttributes{Verb: "bind", Group: rbacGroup, Resource: "clusterroles", Name: "cluster-admin"}, false},
		{"it may not escalate", authorizationv1.ResourceAttributes{Verb: "escalate", Group: rbacGroup, Resource: "clusterroles", Name: "magnum-capi-namespace"}, false},
		{"it may not write ClusterRoleBindings", authorizationv1.ResourceAttributes{Verb: "create", Group: rbacGroup, Resource: "clusterrolebindings"}, false},
		{"it may not update RoleBindings outside its namespace role", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "patch", Group: rbacGroup, Resource: "rolebindings"}, false},
		{"it may list Secrets in every namespace (payload included)", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "list", Resource: "secrets"}, true},
		{"it may watch Secrets in every namespace", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "watch", Resource: "secrets"}, true},
		{"it may not get a Secret by name outside a project namespace", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "get", Resource: "secrets", Name: "anything"}, false},
		{"it may not write Secrets outside a project namespace", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "secrets"}, false},
		{"it may not create Pods", authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "create", Resource: "pods"}, false},
		{"it may not create Deployments outside a project namespace", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Group: "apps", Resource: "deployments"}, false},
		{"it reads no ConfigMaps", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "list", Resource: "configmaps"}, false},
		{"it reads no Pods", authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}, false},
		{"it reads no Nodes", authorizationv1.ResourceAttributes{Verb: "list", Resource: "nodes"}, false},
	}
}

// attempt is a write tried for real (a server-side dry run: admission
// runs, nothing is kept) and whether deploy/rbac's admission policies (and
// RBAC) let it through.
type attempt struct {
	claim string
	// asAdmin: the test bed's administrator tries it (the policy that
	// binds the namespace role matches objects, whoever writes them).
	asAdmin bool
	write   func(ctx context.Context, c client.Client, project string) error
	allowed bool
	// refusal, when set, is in the refusal's text: the policy, not RBAC,
	// refused it.
	refusal string
}

// withPolicyAttempts are README.md's "With the admission policies"
// sentences; project is an existing project namespace.
func withPolicyAttempts() []attempt {
	dry := client.DryRunAll
	binding := func(ns, role, user string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "claim-"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	}
	bind := func(ns func(string) string, user string) func(context.Context, client.Client, string) error {
		return func(ctx context.Context, c client.Client, project string) error {
			return c.Create(ctx, binding(ns(project), "magnum-capi-namespace", user), dry)
		}
	}
	in := func(ns string) func(string) string { return func(string) string { return ns } }
	own := func(p string) string { return p }
	namespace := func(name string, enforce string) func(context.Context, client.Client, string) error {
		return func(ctx context.Context, c client.Client, _ string) error {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if enforce != "" {
				ns.Labels = map[string]string{"pod-security.kubernetes.io/enforce": enforce}
			}
			return c.Create(ctx, ns, dry)
		}
	}
	relabel := func(name func(string) string, enforce string) func(context.Context, client.Client, string) error {
		return func(ctx context.Context, c client.Client, project string) error {
			patch := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"` + enforce + `"}}}`
			return c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name(project)}}, client.RawPatch(types.MergePatchType, []byte(patch)), dry)
		}
	}
	projectName := "magnum-" + rand.String(10)
	basicUser := func(ns func(string) string) func(context.Context, client.Client, string) error {
		return func(ctx context.Context, c client.Client, project string) error {
			return c.Create(ctx, binding(ns(project), "system:basic-user", "magnum-capi"), dry)
		}
	}
	const onlyProjects, onlyItself, podSecurity = "only in project namespaces", "and nothing else", "enforces Pod Security"
	return []attempt{
		{"it binds magnum-capi-namespace to itself in a project namespace", false, bind(own, "magnum-capi"), true, ""},
		{"it binds magnum-capi-namespace in no other namespace", false, bind(in("kube-system"), "magnum-capi"), false, onlyProjects},
		{"nobody binds magnum-capi-namespace outside a project namespace", true, bind(in("kube-system"), "magnum-capi"), false, onlyProjects},
		{"it binds magnum-capi-namespace to nobody else", false, bind(own, "someone-else"), false, onlyItself},
		// RBAC lets it bind system:basic-user: it holds those rights.
		{"it creates no RoleBinding outside a project namespace", false, basicUser(in("default")), false, onlyProjects},
		{"it binds no other ClusterRole in a project namespace", false, basicUser(own), false, onlyItself},
		{"it creates a project namespace enforcing baseline", false, namespace(projectName, "baseline"), true, ""},
		{"it creates no project namespace without Pod Security", false, namespace(projectName, ""), false, podSecurity},
		{"it creates no namespace of another name", false, namespace("not-a-project-"+rand.String(4), "restricted"), false, onlyProjects},
		{"it labels a project namespace restricted", false, relabel(own, "restricted"), true, ""},
		{"it relabels no project namespace privileged", false, relabel(own, "privileged"), false, podSecurity},
		{"it relabels no other namespace", false, relabel(in("default"), "restricted"), false, onlyProjects},
	}
}

// TestDeployRBACClaims proves deploy/rbac/README.md's account of what the
// sidecar's identity can do, sentence by sentence, against the test bed's
// real authorizer (RBAC) and admission (ValidatingAdmissionPolicy,
// PodSecurity): first what RBAC alone allows (SubjectAccessReview), then
// what the admission policies refuse (real writes, dry run).
func TestDeployRBACClaims(t *testing.T) {
	createAll(t, readObjects(t, rbacFiles))
	_, userCfg, err := stack.Env.AddUser("magnum-capi")
	if err != nil {
		t.Fatal(err)
	}
	waitForPolicy(t, userCfg)
	t.Run("rbac alone", func(t *testing.T) {
		for _, c := range rbacAloneClaims() {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "magnum-capi", ResourceAttributes: &c.attr}}
			if err := stack.Env.Client.Create(context.Background(), sar); err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != c.allow {
				t.Errorf("%s: RBAC says allowed=%v for %s %s %q in %q", c.claim, sar.Status.Allowed, c.attr.Verb, c.attr.Resource, c.attr.Name, c.attr.Namespace)
			}
		}
	})
	t.Run("with the admission policies", func(t *testing.T) { checkAttempts(t, userCfg, withPolicyAttempts()) })
}

// checkAttempts makes a project namespace (as the sidecar would: Pod
// Security labels) and tries each attempt there.
func checkAttempts(t *testing.T, userCfg *rest.Config, attempts []attempt) {
	ctx := context.Background()
	project := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "magnum-" + rand.String(12),
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}}}
	if err := stack.Env.Client.Create(ctx, project); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Env.Client.Delete(context.Background(), project) })
	uc, err := client.New(userCfg, client.Options{Scheme: stack.Env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attempts {
		c := uc
		if a.asAdmin {
			c = stack.Env.Client
		}
		err := a.write(ctx, c, project.Name)
		switch {
		case a.allowed && err != nil:
			t.Errorf("%s: refused: %v", a.claim, err)
		case !a.allowed && err == nil:
			t.Errorf("%s: allowed", a.claim)
		case !a.allowed && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), a.refusal)):
			t.Errorf("%s: %v, want forbidden: %q", a.claim, err, a.refusal)
		}
	}
}
