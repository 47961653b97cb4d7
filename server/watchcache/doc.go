// Package watchcache is the sidecar's watch cache of one management cluster:
// informers on the kinds status is derived from (kinds.go), limited to the
// chart's objects, trimmed and interned to what status reads (trim.go,
// intern.go, partial.go) and indexed by cluster, so that a status poll reads
// one cluster's objects from memory without an API request (objects.go). It
// also keeps what the stripped objects no longer say: since when an addon
// has been Failed (failed_addons.go) and how far each kind's watch has got,
// for the read-your-writes barrier (barrier.go). live.go reads the same
// objects once, directly, for `magnum-capi status --cluster`.
//
// The status path reads it through a small interface its user declares
// (server/clusters.WatchCache): Objects, TakeBarrier and Behind.
package watchcache
