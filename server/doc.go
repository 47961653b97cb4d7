// Package server is the sidecar's gRPC layer: it assembles the grpc.Server
// (interceptors, health, reflection), listens on a unix socket or mTLS TCP,
// and serves DriverService with thin handlers: check the request, convert it
// to domain types, call package clusters, convert the answer back. errors.go
// is the one place errors become gRPC status codes.
package server
