package kube

import (
	"context"
	"fmt"
	"sync"

	authnv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace rights. deploy/rbac grants the sidecar no write right outside
// the project namespaces but these: its cluster-wide ClusterRole may create
// and label namespaces and create RoleBindings, and may bind exactly one
// ClusterRole (Cluster.NamespaceRole, "magnum-capi-namespace": Secrets,
// Leases, the chart's kinds). EnsureNamespace binds that ClusterRole to the
// sidecar's own identity in each project namespace it uses; deploy/rbac's
// admission policies refuse a binding of it outside a namespace named like
// a project's, whoever writes it, so the RoleBinding right cannot be turned
// on kube-system.

// namespaceBindings remembers the namespaces this process made or found
// and those whose RoleBinding it made or found, so an operation costs no
// request for them after the first.
type namespaceBindings struct {
	mu       sync.Mutex
	username string
	present  map[string]bool
	bound    map[string]bool
}

// ForgetNamespace: ns may be gone (a Lease could not be made in it), so
// the next EnsureNamespace makes it again, and its RoleBinding.
func (c *Cluster) ForgetNamespace(ns string) {
	b := &c.bindings
	b.mu.Lock()
	delete(b.present, ns)
	delete(b.bound, ns)
	b.mu.Unlock()
}

// NamespaceMissing says whether err, from AcquireLock, means the Lease's
// namespace does not exist (the API server refuses to create an object in
// a namespace it does not have with NotFound).
func NamespaceMissing(err error) bool { return apierrors.IsNotFound(err) }

// BindNamespace makes the RoleBinding granting c.NamespaceRole to the
// sidecar's own identity in ns (an existing namespace: for writes outside an
// operation, such as the cleanup after a delete); idempotent: an existing one is left as is
// (its name carries the role and the identity, so it grants the same).
func (c *Cluster) BindNamespace(ctx context.Context, ns string) error {
	if c.NamespaceRole == "" {
		return nil
	}
	b := &c.bindings
	b.mu.Lock()
	done, username := b.bound[ns], b.username
	b.mu.Unlock()
	if done {
		return nil
	}
	if username == "" {
		var err error
		if username, err = c.whoAmI(ctx); err != nil {
			return err
		}
	}
	rb := namespaceRoleBinding(ns, c.NamespaceRole, username)
	if err := c.Client.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding ClusterRole %s in namespace %s to %s: %w", c.NamespaceRole, ns, username, err)
	}
	b.mu.Lock()
	if b.bound == nil {
		b.bound = map[string]bool{}
	}
	b.bound[ns], b.username = true, username
	b.mu.Unlock()
	return nil
}

// whoAmI is the user name the management API knows the sidecar by (a
// ServiceAccount's is system:serviceaccount:<namespace>:<name>). Every
// authenticated user may ask (system:basic-user).
func (c *Cluster) whoAmI(ctx context.Context) (string, error) {
	r, err := c.Clientset.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("asking the management API who the sidecar is (SelfSubjectReview): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the management API's SelfSubjectReview named no user")
	}
	return r.Status.UserInfo.Username, nil
}

// namespaceRoleBinding binds ClusterRole role to user in ns. A User subject
// matches a ServiceAccount's token too (RBAC compares the user name).
func namespaceRoleBinding(ns, role, user string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: role + ":" + user,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "magnum-capi"},
		},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
}
