package magnum

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// Namespace is the management-cluster namespace of the lane's project.
func (l *Lane) Namespace() string { return "magnum-" + strings.ReplaceAll(l.Project.ID, "-", "") }

// ClusterRemains lists what is left of one cluster in the management
// cluster (harness.ClusterRemains in the lane's namespace).
func (l *Lane) ClusterRemains(ctx context.Context, stackID, uuid string) ([]string, error) {
	return harness.ClusterRemains(ctx, l.Cloud.H.Env.Client, l.Namespace(), stackID, uuid)
}

// Leftovers lists what the lane's deleted clusters left behind: objects in
// the project's management-cluster namespace (every kind a cluster has
// there: harness.ClusterKinds), application credentials of the lane's
// user, trusts it made and trustee users of the clusters (Magnum 15 to 22),
// Nova server groups of the lane's project, and certificates in Magnum's
// x509keypair table. Empty means nothing was
// lost or leaked.
func (l *Lane) Leftovers(ctx context.Context, clusterUUIDs []string) ([]string, error) {
	var left []string
	ns := l.Namespace()
	c := l.Cloud.H.Env.Client
	for _, gvk := range harness.ClusterKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", gvk.Kind, err)
		}
		for _, o := range list.Items {
			left = append(left, gvk.Kind+" "+ns+"/"+o.Name)
		}
	}

	creds, err := l.Cloud.credentialsOf(ctx, l.User.ID)
	if err != nil {
		return nil, err
	}
	left = append(left, creds...)
	var trusts struct {
		Trusts []struct{ ID string } `json:"trusts"`
	}
	if err := l.Cloud.keystoneGet(ctx, "OS-TRUST/trusts?trustor_user_id="+l.User.ID, &trusts); err != nil {
		return nil, err
	}
	for _, tr := range trusts.Trusts {
		left = append(left, "trust "+tr.ID)
	}
	domain, err := l.Cloud.trusteeDomainID(ctx)
	if err != nil {
		return nil, err
	}
	var users struct {
		Users []struct{ Name string } `json:"users"`
	}
	if err := l.Cloud.keystoneGet(ctx, "users?domain_id="+domain, &users); err != nil {
		return nil, err
	}
	for _, u := range users.Users {
		for _, id := range clusterUUIDs {
			if strings.HasPrefix(u.Name, id) {
				left = append(left, "trustee user "+u.Name)
			}
		}
	}

	for _, g := range l.Cloud.H.OpenStack.ServerGroups(l.Project.ID) {
		left = append(left, "server group "+g.Name)
	}

	rows, err := l.SQL(ctx, "SELECT COUNT(*) FROM x509keypair")
	if err != nil {
		return nil, err
	}
	if rows != "0" {
		left = append(left, rows+" x509keypair rows")
	}
	return left, nil
}

// credentialsOf names a user's application credentials, as Keystone's
// admin reads them.
func (c *Cloud) credentialsOf(ctx context.Context, userID string) ([]string, error) {
	var creds struct {
		Credentials []struct{ Name string } `json:"application_credentials"`
	}
	if err := c.keystoneGet(ctx, "users/"+userID+"/application_credentials", &creds); err != nil {
		return nil, err
	}
	var out []string
	for _, cr := range creds.Credentials {
		out = append(out, "application credential "+cr.Name)
	}
	return out, nil
}

// keystoneGet reads an identity API path (relative to /v3) as Keystone's
// admin.
func (c *Cloud) keystoneGet(ctx context.Context, path string, out any) error {
	admin := c.H.Keystone.Admin()
	if _, err := admin.Get(ctx, admin.ServiceURL()+path, out, nil); err != nil {
		return fmt.Errorf("keystone GET %s: %w", path, err)
	}
	return nil
}

// trusteeDomainID is the id of the domain the guide's keystone-magnum
// block created.
func (c *Cloud) trusteeDomainID(ctx context.Context) (string, error) {
	var domains struct {
		Domains []struct{ ID string } `json:"domains"`
	}
	if err := c.keystoneGet(ctx, "domains?name=magnum", &domains); err != nil {
		return "", err
	}
	if len(domains.Domains) != 1 {
		return "", fmt.Errorf("keystone: %d domains named magnum", len(domains.Domains))
	}
	return domains.Domains[0].ID, nil
}

// AdminFootprint is whatever exists of the lane's cloud admin or in its
// project: server groups, the admin's application credentials, a
// management-cluster namespace. A cloud admin acting on the lane's clusters
// must leave it empty: every write for a cluster belongs in the cluster's
// project.
func (l *Lane) AdminFootprint(ctx context.Context) ([]string, error) {
	var found []string
	for _, g := range l.Cloud.H.OpenStack.ServerGroups(l.Admins.ID) {
		found = append(found, "server group "+g.Name)
	}
	creds, err := l.Cloud.credentialsOf(ctx, l.Admin.ID)
	if err != nil {
		return nil, err
	}
	found = append(found, creds...)
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	name := "magnum-" + strings.ReplaceAll(l.Admins.ID, "-", "")
	err = l.Cloud.H.Env.Client.Get(ctx, client.ObjectKey{Name: name}, ns)
	switch {
	case err == nil:
		found = append(found, "namespace "+name)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	return found, nil
}
