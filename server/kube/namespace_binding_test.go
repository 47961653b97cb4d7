package kube

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestEnsureNamespaceBindsTheSidecar: an identity that may only create
// namespaces and RoleBindings and bind one ClusterRole gets that role's
// rights in each namespace EnsureNamespace makes, and no others; a second
// call (this process or another) converges; without a NamespaceRole no
// RoleBinding is made.
func TestEnsureNamespaceBindsTheSidecar(t *testing.T) {
	ctx := context.Background()
	id := rand.String(6)
	user, nsRole := "sidecar-"+id, "ns-rights-"+id
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: nsRole}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{nsRole}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	_, cfg, err := env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(role string) *Cluster {
		c, err := Connect("test", cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.NamespaceRole = role
		return c
	}
	bound, unbound := "bound-"+id, "unbound-"+id
	first := connect(nsRole)
	for _, c := range []*Cluster{first, first, connect(nsRole)} {
		if err := c.EnsureNamespace(ctx, bound, nil); err != nil {
			t.Fatalf("EnsureNamespace: %v", err)
		}
	}
	if err := connect("").EnsureNamespace(ctx, unbound, nil); err != nil {
		t.Fatalf("EnsureNamespace without a role: %v", err)
	}

	var rbs rbacv1.RoleBindingList
	if err := env.Client.List(ctx, &rbs, client.InNamespace(bound)); err != nil {
		t.Fatal(err)
	}
	if len(rbs.Items) != 1 || rbs.Items[0].Name != nsRole+":"+user || rbs.Items[0].RoleRef.Name != nsRole {
		t.Errorf("RoleBindings in %s: %+v; want one, %s:%s", bound, rbs.Items, nsRole, user)
	}
	for ns, want := range map[string]bool{bound: true, unbound: false, "default": false} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"}}
		err := first.Client.Create(ctx, s)
		if got := err == nil; got != want || (err != nil && !apierrors.IsForbidden(err)) {
			t.Errorf("creating a Secret in %s as the sidecar: %v; want allowed=%v", ns, err, want)
		}
	}
}

// TestEnsureNamespaceRemembers: a namespace made or found once costs no
// request afterwards; a Lease in a namespace that is gone fails with
// NamespaceMissing, and once forgotten the namespace is read (and made)
// again.
func TestEnsureNamespaceRemembers(t *testing.T) {
	ctx := context.Background()
	c := leaseClient(t)
	var requests []string
	c.Client = recordRequests{Client: c.Client, verbs: &requests}
	ns := "remember-" + rand.String(6)
	for range 2 {
		if err := c.EnsureNamespace(ctx, ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"get", "create"}; !slices.Equal(requests, want) {
		t.Errorf("two EnsureNamespace: requests %v, want %v (the second none)", requests, want)
	}

	gone := "gone-" + rand.String(6)
	_, err := c.AcquireLock(ctx, LockRequest{Namespace: gone, Name: "x", Holder: "sidecar-a/op1", TTL: time.Minute}, quiet)
	if !NamespaceMissing(err) {
		t.Errorf("a Lease in a namespace that does not exist: %v, want NamespaceMissing", err)
	}
	lock, err := c.AcquireLock(ctx, LockRequest{Namespace: ns, Name: "x", Holder: "sidecar-a/op1", TTL: time.Minute}, quiet)
	if NamespaceMissing(err) || err != nil {
		t.Fatalf("a Lease in an existing namespace: %v", err)
	}
	if err := lock.Release(ctx); err != nil {
		t.Fatal(err)
	}

	requests = nil
	c.ForgetNamespace(ns)
	if err := c.EnsureNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"get"}; !slices.Equal(requests, want) {
		t.Errorf("EnsureNamespace after ForgetNamespace: requests %v, want %v", requests, want)
	}
}
