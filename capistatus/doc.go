// Package capistatus derives what Magnum should be told about a cluster from one
// snapshot of its Cluster API objects: the cluster status and a status_reason a
// user can act on, per node group status, node_count and node_addresses, the API
// address, the Kubernetes version, and health.
//
// It is pure on purpose: the sidecar feeds it from a watch cache and the
// `magnum-capi status --from-dir` command feeds it from files, and both must
// reach the same answer. It never does I/O and never panics on any input.
//
// Every transition Derive and DeriveHealth make is a row of docs/status.md, and
// every row has a test case carrying its ID.
package capistatus
