// Package server is the sidecar: New assembles it from a validated
// configuration (sidecar.go: management-cluster clients and watch caches,
// the chart source, the OpenStack adapter, the domain service, the
// grpc.Server on its listener) and Serve runs it (serve.go). The gRPC
// layer serves DriverService with thin handlers (service.go): check the
// request (validate.go), convert it to domain types (convert.go), call
// package clusters, convert the answer back. errors.go is the one place
// errors become gRPC status codes.
package server
