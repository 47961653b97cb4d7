// Package clusters carries out Magnum's operations on one cluster: it
// resolves OpenStack facts, renders values (helmvalues), writes Secrets
// (certs), installs or upgrades the chart (release), and derives status from
// the watch cache (capistatus). It is the domain layer between the thin gRPC
// service in package server and the I/O adapters; it imports no gRPC or
// generated proto code.
//
// Every operation is idempotent: it can be retried after a crash at any
// point and converges. Operations on one cluster are serialized across
// sidecar replicas by a Lease in the cluster's namespace.
package clusters
