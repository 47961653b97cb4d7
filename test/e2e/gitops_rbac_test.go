package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// argoRBACFile is the Role and RoleBinding operators apply in Argo CD's
// namespace for the GitOps hand-off; argoPolicyFile the admission policy
// applied with them.
const (
	argoRBACFile   = "../../deploy/rbac/argocd/role.yaml"
	argoPolicyFile = "../../deploy/rbac/argocd/admission-policy.yaml"
)

// argoRole reads deploy/rbac/argocd's Role and RoleBinding, for namespace
// ns and bound to user instead of magnum-capi (each test its own identity,
// holding no more than it needs).
func argoRole(t *testing.T, ns, user string) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	for _, obj := range readObjects(t, argoRBACFile) {
		var into any = &role
		if obj.GetKind() == "RoleBinding" {
			into = &binding
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if role.Name == "" || binding.Name == "" || binding.RoleRef.Name != role.Name {
		t.Fatalf("%s: want a Role and a RoleBinding of it, got %q and %q", argoRBACFile, role.Name, binding.Name)
	}
	role.Namespace, binding.Namespace = ns, ns
	binding.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: user}}
	return &role, &binding
}

// argoIdentity is a user bound by deploy/rbac/argocd's Role (with verbs) in
// ns, and its kubeconfig and client: what a site's argocd.kubeconfig holds.
func argoIdentity(t *testing.T, ns, user string, verbs []string) (string, *kube.Cluster) {
	t.Helper()
	role, binding := argoRole(t, ns, user)
	role.Rules[0].Verbs = verbs
	// One Role per identity: a user never held a verb its test denies.
	role.Name, binding.Name, binding.RoleRef.Name = user, user, user
	for _, obj := range []client.Object{role, binding} {
		if err := stack.Env.Client.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	kubeconfig, cfg, err := stack.Env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kube.Connect(user, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, kc
}

// TestGitOpsRoleEveryRuleCounts: deploy/rbac/argocd's Role lets the
// sidecar's kube client write (server-side apply: create, then update) and
// delete an Argo CD cluster Secret, and every verb it grants is needed:
// without create the first apply (the one that makes the Secret) is
// refused, without patch every apply, without delete the removal. It
// grants no read.
func TestGitOpsRoleEveryRuleCounts(t *testing.T) {
	role, _ := argoRole(t, "x", "x")
	if got := role.Rules[0].Verbs; len(role.Rules) != 2 || !slices.Equal(got, []string{"create", "patch", "delete"}) || role.Rules[1].APIGroups[0] != "magnum-capi.io" {
		t.Fatalf("%s grants %v; this test knows create, patch, delete on secrets and the admission policy's marker", argoRBACFile, role.Rules)
	}
	tests := []struct {
		drop                         string
		create, update, remove, read bool
	}{
		{"", true, true, true, false},
		{"create", false, true, true, false},
		{"patch", false, false, true, false},
		{"delete", true, true, false, false},
	}
	for _, tt := range tests {
		name := "without " + tt.drop
		if tt.drop == "" {
			name = "the whole Role"
		}
		t.Run(name, func(t *testing.T) {
			ns := "argocd-rules"
			ensureNamespace(t, ns)
			user := "magnum-capi-argocd-" + rand.String(6)
			verbs := slices.DeleteFunc(slices.Clone(role.Rules[0].Verbs), func(v string) bool { return v == tt.drop })
			_, kc := argoIdentity(t, ns, user, verbs)
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "magnum-" + user, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
				StringData: map[string]string{"server": "https://203.0.113.10:6443"}}
			if tt.drop == "" {
				waitAllowed(t, func() error { return kc.ApplySecret(context.Background(), secret) })
			} else if err := kc.ApplySecret(context.Background(), secret); (err == nil) != tt.create {
				t.Errorf("first apply: %v, want allowed %v", err, tt.create)
			}
			if err := stack.Env.Client.Create(context.Background(), secret.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			secret.StringData["server"] = "https://203.0.113.11:6443"
			if err := kc.ApplySecret(context.Background(), secret); (err == nil) != tt.update {
				t.Errorf("apply of an existing Secret: %v, want allowed %v", err, tt.update)
			}
			if _, err := kc.GetSecret(context.Background(), ns, secret.Name); (err == nil) != tt.read {
				t.Errorf("read: %v, want allowed %v", err, tt.read)
			}
			if err := kc.DeleteSecret(context.Background(), ns, secret.Name); (err == nil) != tt.remove {
				t.Errorf("delete: %v, want allowed %v", err, tt.remove)
			}
			_ = stack.Env.Client.Delete(context.Background(), secret)
		})
	}
}

// waitAllowed retries f while RBAC has not caught up with a new binding.
func waitAllowed(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("with deploy/rbac/argocd's Role: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestGitOpsSecretsConfined: with deploy/rbac/argocd applied whole (the
// Role and its admission policy) in Argo CD's namespace, the identity the
// Role binds, which RBAC lets create, patch and delete any Secret there
// (SubjectAccessReview), can write and delete only the hand-off's own
// cluster Secrets: not argocd-secret, not a Secret of another name or
// type, not a site's own cluster Secret named like the hand-off's. The
// test bed's real admission refuses the rest (server-side dry runs).
func TestGitOpsSecretsConfined(t *testing.T) {
	ctx := context.Background()
	ensureNamespace(t, argoCDNamespace)
	createAll(t, readObjects(t, argoPolicyFile))
	user := "magnum-capi-argocd-" + rand.String(6)
	_, kc := argoIdentity(t, argoCDNamespace, user, []string{"create", "patch", "delete"})
	site := map[string]*corev1.Secret{}
	for name, labels := range map[string]map[string]string{
		"argocd-secret":       nil,
		"magnum-site-" + user: {"argocd.argoproj.io/secret-type": "cluster"},
	} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNamespace, Name: name, Labels: labels}}
		if err := stack.Env.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		site[name] = s
	}
	for _, name := range []string{"argocd-secret", "magnum-site-" + user} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: argoCDNamespace, Verb: "patch", Resource: "secrets", Name: name}}}
		if err := stack.Env.Client.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		if !sar.Status.Allowed {
			t.Errorf("RBAC alone refuses %s patching Secret %s; README.md says the Role allows it", user, name)
		}
	}
	own := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoCDNamespace, Name: name, Labels: labels},
			StringData: map[string]string{"server": "https://203.0.113.10:6443"}}
	}
	ours := map[string]string{"app.kubernetes.io/managed-by": "magnum-capi", "argocd.argoproj.io/secret-type": "cluster"}
	mine := own("magnum-"+user+"-abcdefghijkl", ours)
	waitAllowed(t, func() error { return kc.ApplySecret(ctx, mine) })
	waitRefused(t, func() error { return kc.Client.Delete(ctx, site["argocd-secret"], client.DryRunAll) })
	dry := client.DryRunAll
	for _, tt := range []struct {
		what  string
		write func() error
	}{
		{"patch argocd-secret", func() error {
			return kc.Client.Patch(ctx, site["argocd-secret"], client.RawPatch(types.MergePatchType, []byte(`{"stringData":{"admin.password":"x"}}`)), dry)
		}},
		{"delete argocd-secret", func() error { return kc.Client.Delete(ctx, site["argocd-secret"], dry) }},
		{"patch a site's cluster Secret named like the hand-off's", func() error {
			return kc.Client.Patch(ctx, site["magnum-site-"+user], client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"magnum-capi"}}}`)), dry)
		}},
		{"delete a site's cluster Secret", func() error { return kc.Client.Delete(ctx, site["magnum-site-"+user], dry) }},
		{"create a repository Secret", func() error {
			return kc.Client.Create(ctx, own("magnum-repo-"+user, map[string]string{"app.kubernetes.io/managed-by": "magnum-capi", "argocd.argoproj.io/secret-type": "repository"}), dry)
		}},
		{"create a cluster Secret without the hand-off's label", func() error {
			return kc.Client.Create(ctx, own("magnum-unlabelled-"+user, map[string]string{"argocd.argoproj.io/secret-type": "cluster"}), dry)
		}},
		{"create a Secret of another name", func() error { return kc.Client.Create(ctx, own("argocd-"+user, ours), dry) }},
	} {
		if err := tt.write(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "only its own Argo CD cluster Secrets") {
			t.Errorf("%s as %s: %v; want refused by the admission policy", tt.what, user, err)
		}
	}
	if err := kc.DeleteSecret(ctx, argoCDNamespace, mine.Name); err != nil {
		t.Errorf("deleting its own cluster Secret: %v", err)
	}
	_ = stack.Env.Client.Delete(ctx, site["magnum-site-"+user])
}

// waitRefused retries f until the API server enforces a new admission
// policy (it loads them asynchronously): until f is forbidden.
func waitRefused(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if apierrors.IsForbidden(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admission policy is not enforced after 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
