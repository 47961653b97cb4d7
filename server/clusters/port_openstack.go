package clusters

import (
	"context"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// The domain's ports to OpenStack: small interfaces, declared here where
// they are used, in the adapter's own types (server/openstack implements
// them with gophercloud; unit tests with fakes).

// FactFinder resolves what the values need from OpenStack.
type FactFinder interface {
	// Facts resolves the template's image (kube_version, os_distro), the
	// external network, fixed network/subnet names and the Cinder volume
	// types. Bad references (no such image, image without kube_version) are
	// invalid-argument errors naming the field.
	Facts(ctx context.Context, caller openstack.Caller, objs openstack.Objects) (openstack.Facts, error)
}

// Credentials makes and deletes the clusters' application credentials.
type Credentials interface {
	// CreateCredential makes a new application credential for the cluster
	// as the caller (Keystone only lets users create their own).
	CreateCredential(ctx context.Context, caller openstack.Caller, cluster helmvalues.Cluster) (openstack.Credential, error)
	// DeleteCredential deletes the credential with the sidecar's own service
	// identity (the periodic status sync has no user token). Already gone is
	// not an error; refusing to delete a credential that does not belong to
	// the cluster (name prefix) is.
	DeleteCredential(ctx context.Context, cluster helmvalues.Cluster, credentialID string) error
	// CredentialIDFromClouds reads the application credential id back from a
	// clouds.yaml this interface produced (or the StackHPC driver did).
	CredentialIDFromClouds(cloudsYAML []byte) (string, error)
	// CallerCredentials lists the caller's own application credentials
	// named for the cluster (magnum-<cluster uuid>-...), as the caller.
	CallerCredentials(ctx context.Context, caller openstack.Caller, cluster helmvalues.Cluster) ([]openstack.CredentialRef, error)
	// DeleteCallerCredential deletes one of the caller's own credentials
	// named for the cluster, as the caller. Already gone is not an error.
	DeleteCallerCredential(ctx context.Context, caller openstack.Caller, cluster helmvalues.Cluster, ref openstack.CredentialRef) error
	// ClusterCredentials lists, with the service identity, the credentials
	// named for the cluster of every user of its project, with their owner.
	ClusterCredentials(ctx context.Context, cluster helmvalues.Cluster) ([]openstack.CredentialRef, error)
}

// ServerGroups finds, makes and deletes the clusters' Nova server groups,
// as the caller (server groups belong to the project).
type ServerGroups interface {
	// EnsureServerGroups finds each named group in the project, or makes it
	// with policy, and returns them by name. Idempotent: found by name.
	EnsureServerGroups(ctx context.Context, caller openstack.Caller, policy string, names []string) (map[string]openstack.ServerGroup, error)
	// DeleteServerGroups deletes every group of the project with one of
	// names; gone already is not an error. It returns how many it deleted.
	DeleteServerGroups(ctx context.Context, caller openstack.Caller, names []string) (int, error)
}

// FloatingIPs looks up the project's floating IPs, as the caller.
type FloatingIPs interface {
	// FindFloatingIP finds the floating IP with address among those of
	// caller.ProjectID; found is false when the project has none.
	FindFloatingIP(ctx context.Context, caller openstack.Caller, address string) (fip openstack.FloatingIP, found bool, err error)
}

// OpenStack is every port: what Deps takes.
type OpenStack interface {
	FactFinder
	Credentials
	ServerGroups
	FloatingIPs
}
