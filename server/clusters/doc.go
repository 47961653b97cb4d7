// Package clusters carries out Magnum's operations on one cluster: it
// resolves OpenStack facts, renders values (helmvalues), writes Secrets
// (certs), installs or upgrades the chart (release), and derives status from
// the watch cache (capistatus). It is the domain layer between the thin gRPC
// service in package server and the I/O adapters; it imports no gRPC or
// generated proto code, and no adapter imports it.
//
// Where things are:
//
//   - spec.go, caller.go: what every operation starts from (Spec, Caller).
//   - port_*.go: the small interfaces the domain needs of its adapters,
//     in the adapters' own types (OpenStack, Helm's releases and charts,
//     the management cluster, the watch cache); the operations' unit tests
//     run on fakes of them (fakes_test.go).
//   - operation.go: the one prologue (stack_id check, placement,
//     namespace, render, the operation's own check, chart load);
//     lock.go the per-cluster Lease every write holds; placement.go,
//     render.go, release.go (deploying the chart), stack_id.go.
//   - one file per operation, each stating its idempotency: create.go,
//     update.go, upgrade.go, delete.go, rotate_ca.go, rotate_credential.go,
//     preview.go, status.go, health.go.
//   - what operations share, named for what it holds: credential_secret.go,
//     credential_orphans.go, machine_removal.go, delete_requests.go,
//     adoption.go, status_guard.go (read-your-writes), status_snapshot.go,
//     status_cleanup.go.
//
// Every operation is idempotent: it can be retried after a crash at any
// point and converges. Operations on one cluster are serialized across
// sidecar replicas by a Lease in the cluster's namespace.
package clusters
