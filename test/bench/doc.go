// Package bench holds the benchmarks that need the whole test
// stack (test/harness) and a real sidecar: status polls over 100, 1,000 and
// 2,000 clusters' objects (latency, API requests per poll, the sidecar's
// RSS), create time against a server-side-apply baseline, and 200 creates
// at once. They run only from `make bench` (MAGNUM_CAPI_BENCH=1 with
// -bench); `go test ./...` only compiles them. docs/benchmarks.md holds the
// targets, the latest figures and how to reproduce them.
package bench
