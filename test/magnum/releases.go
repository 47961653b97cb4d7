package magnum

import "github.com/magnum-capi/magnum-capi/test/magnum/release"

// Release is a Magnum release from a Debian suite's packages.
type Release = release.Release

// Releases are the Magnum releases the tests run (release.Releases).
var Releases = release.Releases

// Demo is the demo's lane (release.Demo).
var Demo = release.Demo
