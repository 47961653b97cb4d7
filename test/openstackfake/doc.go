// Package openstackfake is the OpenStack test double for the services that
// cannot run here: Glance v2, Neutron v2.0, Cinder v3 and Nova v2.1 answer on
// one httptest server from recorded or API-reference JSON (testdata/,
// PROVENANCE.md says which). Keystone is real (test/keystone); the fake
// validates every X-Auth-Token against it the way keystonemiddleware does, or
// accepts tokens a test registers. In that static-token mode the fake also
// answers Keystone's token validation (GET /identity/v3/auth/tokens) with a
// catalog pointing at itself, so a unit test needs no Keystone.
//
// Services live under devstack's path prefixes on the one server:
//
//	/identity/v3          (static-token mode only)
//	/image                Glance      (catalog type "image")
//	/networking           Neutron     (catalog type "network")
//	/volume/v3/{project}  Cinder      (catalog type "volumev3")
//	/compute/v2.1         Nova        (catalog type "compute")
//
// so gophercloud's catalog look-up and version discovery work unchanged.
// Visibility follows the services' rules for a non-admin token: private
// images, networks, subnets, volume types and flavors of other projects are
// invisible; the admin role sees everything.
//
// Tests register objects (AddImage, AddNetwork, AddSubnet, AddVolumeType,
// AddFlavor), inject failures (Fail: a status, a delay, a dropped
// connection) and count requests (Requests).
package openstackfake
