package release

import (
	"bytes"
	"fmt"
	"testing"

	helmkube "helm.sh/helm/v3/pkg/kube"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// testRolesBeforeBindings: an identity without "bind" (the sidecar under
// deploy/rbac) may create a RoleBinding only once the API server can read
// the role it names, so concurrent writes must create roles before their
// bindings — on install, and on an upgrade that adds a role and its
// bindings. Many bindings per role make a write out of order all but
// certain to be refused.
func testRolesBeforeBindings(t *testing.T, env *testbed.Env, kc *kube.Cluster) {
	ctx := t.Context()
	const ns, user = "release-roles", "release-no-bind"
	if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	// What the identity may do: write roles and bindings, and hold the
	// one rule the bound roles grant; never "bind" or "escalate".
	grant := []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: ns}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"},
				Verbs: []string{"get", "list", "create", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "writer"},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}},
	}
	for _, o := range grant {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	_, cfg, err := env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	ukc, err := kube.Connect(user, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := concurrentWrites{Client: helmkube.New(ukc.HelmGetter(ns))}
	w.Namespace = ns

	v1, v2 := rolesAndBindings(t, w, ns, 1), rolesAndBindings(t, w, ns, 2)
	if _, err := w.Create(v1); err != nil {
		t.Fatalf("create a role and its bindings as %s: %v", user, err)
	}
	if _, err := w.Update(v1, v2, false); err != nil {
		t.Fatalf("upgrade adding a role and its bindings as %s: %v", user, err)
	}
	var bindings rbacv1.RoleBindingList
	if err := env.Client.List(ctx, &bindings, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if got, want := len(bindings.Items), 1+2*bindingsPerRole; got != want {
		t.Errorf("%d RoleBindings in %s, want %d (the identity's own and the release's)", got, ns, want)
	}
}

const bindingsPerRole = 12

// rolesAndBindings renders roles reader-1 … reader-n, each granting what
// the identity holds, and bindingsPerRole bindings of each, roles last so
// that the given order is the wrong one.
func rolesAndBindings(t *testing.T, w concurrentWrites, ns string, n int) helmkube.ResourceList {
	t.Helper()
	var manifest bytes.Buffer
	for r := 1; r <= n; r++ {
		for b := 1; b <= bindingsPerRole; b++ {
			fmt.Fprintf(&manifest, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader-%d-%d, namespace: %s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader-%d}
subjects: [{kind: ServiceAccount, name: default, namespace: %s}]
`, r, b, ns, r, ns)
		}
	}
	for r := 1; r <= n; r++ {
		fmt.Fprintf(&manifest, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader-%d, namespace: %s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
`, r, ns)
	}
	list, err := w.Build(&manifest, false)
	if err != nil {
		t.Fatal(err)
	}
	return list
}
