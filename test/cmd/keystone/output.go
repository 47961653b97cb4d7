package main

import (
	"time"

	"github.com/magnum-capi/magnum-capi/test/keystone"
)

// Output is the JSON line printed when everything answers. Secrets are test
// values: the process only ever runs on a developer machine or in CI.
type Output struct {
	AuthURL      string          `json:"auth_url"` // http://127.0.0.1:<port>/v3
	Region       string          `json:"region"`   // RegionOne
	Dir          string          `json:"dir"`      // state and logs (log/keystone.log, log/uwsgi.log)
	StartSeconds float64         `json:"start_seconds"`
	Admin        keystone.User   `json:"admin"`   // bootstrap admin, project admin, domain default
	Service      ServiceIdentity `json:"service"` // the sidecar's identity
	User         UserWithToken   `json:"user"`    // a Magnum user (member of project demo)
	Fake         *FakeCloud      `json:"fake,omitempty"`
}

// ServiceIdentity is user "magnum" with the admin role on project
// "service" (what deleting other users' application credentials needs),
// and the clouds.yaml the sidecar's openstack.cloudsFile/cloud point to.
type ServiceIdentity struct {
	keystone.User
	CloudsYAML string `json:"clouds_yaml"`
	Cloud      string `json:"cloud"`
}

// UserWithToken is a user and a project-scoped token, as Magnum's request
// context carries it (it expires after an hour; get a new one with the
// password).
type UserWithToken struct {
	keystone.User
	Token          string    `json:"token"`
	TokenExpiresAt time.Time `json:"token_expires_at"`
}

// FakeCloud is the fake's URL, its catalog entries and what it was seeded
// with.
type FakeCloud struct {
	URL             string            `json:"url"`
	Endpoints       map[string]string `json:"endpoints"`
	Image           Named             `json:"image"`
	KubeVersion     string            `json:"kube_version"`
	OSDistro        string            `json:"os_distro"`
	ExternalNetwork Named             `json:"external_network"`
	FixedNetwork    Named             `json:"fixed_network"`
	FixedSubnet     Named             `json:"fixed_subnet"`
	VolumeTypes     []Named           `json:"volume_types"`
	Flavors         []Named           `json:"flavors"`
}

// Named is an OpenStack object's id and name.
type Named struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}
