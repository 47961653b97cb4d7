package clusters

import "github.com/magnum-capi/magnum-capi/server/openstack"

// Caller is who asks: Magnum's request context. The token is only used for
// what must act as the user (creating the cluster's application credential,
// reading the user's images and networks).
type Caller struct {
	AuthToken, AuthURL    string
	UserID, ProjectID     string
	RegionName, RequestID string
	IsAdmin               bool
}

// identity is the caller as the OpenStack adapter takes it.
func (c Caller) identity() openstack.Caller {
	return openstack.Caller{
		AuthToken: c.AuthToken, AuthURL: c.AuthURL, UserID: c.UserID, ProjectID: c.ProjectID,
		RegionName: c.RegionName, RequestID: c.RequestID,
	}
}
