package clusters

import (
	"context"
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// Caller is who asks: Magnum's request context. The token is only used for
// what must act as the user (creating the cluster's application credential,
// reading the user's images and networks).
type Caller struct {
	AuthToken  string
	AuthURL    string
	UserID     string
	ProjectID  string
	RegionName string
	RequestID  string
	IsAdmin    bool
}

// Facts are the OpenStack look-ups the values need.
type Facts struct {
	Image             helmvalues.Image
	ExternalNetworkID string
	FixedNetworkID    string
	FixedSubnetID     string
	VolumeTypes       []helmvalues.VolumeType
}

// Credential is a Keystone application credential made for one cluster,
// and the clouds.yaml the cluster's <stack_id>-cloud-credentials Secret holds.
type Credential struct {
	ID   string
	Name string
	// CloudsYAML is a clouds.yaml with one cloud named "openstack" that
	// authenticates with this credential (v3applicationcredential).
	CloudsYAML []byte
	// CACert is the PEM bundle CAPO and the cloud provider must trust to
	// reach OpenStack's APIs; empty when the cloud uses public CAs.
	CACert []byte
}

// OpenStack is what the operations need from OpenStack (server/openstack
// implements it with gophercloud).
type OpenStack interface {
	// Facts resolves the template's image (kube_version, os_distro), the
	// external network, fixed network/subnet names and the Cinder volume
	// types. Bad references (no such image, image without kube_version) are
	// invalid-argument errors naming the field.
	Facts(ctx context.Context, caller Caller, spec Spec) (Facts, error)
	// CreateCredential makes a new application credential for the cluster
	// as the caller (Keystone only lets users create their own).
	CreateCredential(ctx context.Context, caller Caller, cluster helmvalues.Cluster) (Credential, error)
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
	CallerCredentials(ctx context.Context, caller Caller, cluster helmvalues.Cluster) ([]CredentialRef, error)
	// DeleteCallerCredential deletes one of the caller's own credentials
	// named for the cluster, as the caller. Already gone is not an error.
	DeleteCallerCredential(ctx context.Context, caller Caller, cluster helmvalues.Cluster, ref CredentialRef) error
}

// CredentialRef names an application credential, without its secret.
type CredentialRef struct{ ID, Name string }

// Spec is one Magnum cluster as Magnum's database has it at the call.
type Spec struct {
	Cluster    helmvalues.Cluster
	Template   helmvalues.ClusterTemplate
	NodeGroups []helmvalues.NodeGroup
	// CreatedAt and UpdatedAt are the cluster's timestamps in Magnum; zero
	// when Magnum did not send them.
	CreatedAt, UpdatedAt time.Time
}
