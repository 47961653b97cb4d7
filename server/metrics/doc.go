// Package metrics is the sidecar's Prometheus adapter: RPC latency and
// errors by method, Helm operation durations, watch cache sizes and sync
// state per management cluster, and cluster status transitions, served with
// /healthz on their own HTTP address (config option metricsAddress), apart
// from the gRPC socket Magnum uses.
//
// Every series is documented in docs/operator-guide.md ("Metrics").
package metrics
