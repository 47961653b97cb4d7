package openstack

import (
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// The adapter's own types, as gophercloud's packages own theirs: what its
// methods take and return. Callers convert to and from them; the adapter
// knows nothing of its callers.

// Caller is who a request acts as: Magnum's user token, passed through
// unchanged, and the request it came with.
type Caller struct {
	// AuthToken is the user's Keystone token; AuthURL is Keystone's URL
	// when the request names one.
	AuthToken, AuthURL string
	// ClusterCloudsYAML, set instead of AuthToken, is a cluster's
	// clouds.yaml (its <stack_id>-cloud-credentials Secret): the request
	// acts as the cluster's own application credential, an identity of the
	// cluster's project. The domain sets it when the requester is of
	// another project (a cloud admin acting on a tenant's cluster), so that
	// nothing is read or made in the requester's project.
	ClusterCloudsYAML []byte
	// UserID and ProjectID are whose the token must be ("" is not checked).
	UserID, ProjectID string
	// RegionName picks endpoints from the token's catalog unless the
	// configuration names a region; RequestID is Magnum's, for the logs.
	RegionName, RequestID string
}

// Objects are the Magnum objects whose OpenStack references Facts
// resolves: the template's image and networks, the cluster's overrides of
// them, and every flavor the cluster boots.
type Objects struct {
	Cluster    helmvalues.Cluster
	Template   helmvalues.ClusterTemplate
	NodeGroups []helmvalues.NodeGroup
}

// Facts are what Facts found: what the values need from OpenStack.
type Facts struct {
	Image helmvalues.Image
	// NodeGroupImages are the worker node groups' images that are not the
	// template's, by the node group's image_id as Magnum holds it (a group
	// upgraded on its own, or created with its own image).
	NodeGroupImages   map[string]helmvalues.Image
	ExternalNetworkID string
	FixedNetworkID    string
	FixedSubnetID     string
	VolumeTypes       []helmvalues.VolumeType
	// Flavors are the node groups' flavors with their extra specs, by the
	// reference Magnum holds (id or name); empty when the flavor check is
	// off (Config.SkipFlavorCheck, which only tests set).
	Flavors map[string]helmvalues.Flavor
}

// Credential is a Keystone application credential made for one cluster,
// and the clouds.yaml the cluster's <stack_id>-cloud-credentials Secret
// holds.
type Credential struct {
	ID   string
	Name string
	// CloudsYAML is a clouds.yaml with one cloud named "openstack" that
	// authenticates with this credential (v3applicationcredential).
	CloudsYAML []byte
	// CACert is the PEM bundle CAPO and the cloud provider must trust to
	// reach OpenStack's APIs; empty when the cloud uses public CAs.
	CACert []byte
	// Roles are the roles Keystone gave the credential; ExpiresAt is when
	// it expires (zero: never).
	Roles     []string
	ExpiresAt time.Time
}

// CredentialRef names an application credential, without its secret;
// UserID is its owner when the listing knows it.
type CredentialRef struct{ ID, Name, UserID string }
