// Package release names the Magnum releases the lanes run and the Debian
// suites carrying them. A package of its own so that test/cmd/debian-roots
// knows the suites without compiling the lanes.
package release

import "strconv"

// Release is a Magnum release from a Debian suite's packages.
type Release struct {
	// Major is Magnum's major version, e.g. 15.
	Major int
	// Suite is the Debian suite carrying it.
	Suite string
	// Host: the release is this machine's own (Debian 12 bookworm); the
	// others run from debootstrapped root file systems.
	Host bool
	// Lane names a second lane of the same release, with a database,
	// virtual host, region and Keystone project of its own ("" for the
	// release's own lane): the demo's.
	Lane string
}

// Releases are the Magnum releases the tests run: Zed (bookworm, this
// machine), Epoxy (trixie) and master/eventlet-free 23 (sid).
var Releases = []Release{
	{Major: 15, Suite: "bookworm", Host: true},
	{Major: 20, Suite: "trixie"},
	{Major: 23, Suite: "sid"},
}

// Demo is the lane `make demo` runs, and make test's
// TestCLILifecycle/demo: Magnum 15, as a newcomer's machine has it.
var Demo = Release{Major: 15, Suite: "bookworm", Host: true, Lane: "demo"}

// Name is "magnum15" etc. ("magnum15demo" for the demo's lane): the lane's
// database, virtual host, region and Keystone project are named after it.
func (r Release) Name() string { return "magnum" + strconv.Itoa(r.Major) + r.Lane }

// VHost is the release's RabbitMQ virtual host (and user).
func (r Release) VHost() string { return r.Name() }

// Region is the Keystone region whose container-infra endpoint is this
// release's magnum-api.
func (r Release) Region() string { return "Region" + strconv.Itoa(r.Major) + r.Lane }

// HasTrusts: Magnum 15 to 22 create a trustee user and a trust for every
// cluster; 23 (master) removed trusts.
func (r Release) HasTrusts() bool { return r.Major <= 22 }

// SupportsCiliumNetworkDriver: Magnum 15's API accepts only flannel and
// calico as a Kubernetes template's network_driver; 20 accepts cilium.
func (r Release) SupportsCiliumNetworkDriver() bool { return r.Major >= 20 }
