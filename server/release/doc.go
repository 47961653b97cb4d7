// Package release installs, upgrades and uninstalls the openstack-cluster
// chart with the Helm v3 Go SDK, in process: no helm binary. It builds
// "upgrade --install" (which the SDK lacks), recovers releases a crash left
// pending, and loads charts from HTTP(S) repositories, OCI registries or
// local paths through an on-disk cache.
package release
