package server

import (
	"crypto/tls"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// grpcOptions assemble the gRPC server.
type grpcOptions struct {
	Log *slog.Logger
	// TLS, when set, is required of every client (TCP listeners); nil for
	// the unix socket, which file permissions protect.
	TLS *tls.Config
	// Observe receives every call's outcome (metrics).
	Observe func(method string, code codes.Code, elapsed time.Duration)
	// ObserveTransition receives every cluster status change a status poll
	// reports to Magnum (metrics).
	ObserveTransition func(from, to string)
}

// newGRPCServer builds the grpc.Server: DriverService, the standard health
// service (serving once ready) and reflection for grpcurl.
func newGRPCServer(svc pb.DriverServiceServer, opts grpcOptions) (*grpc.Server, *health.Server) {
	serverOpts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unaryInterceptor(opts.Log, opts.Observe, opts.ObserveTransition)),
		grpc.MaxRecvMsgSize(16 << 20),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	if opts.TLS != nil {
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(opts.TLS)))
	}
	srv := grpc.NewServer(serverOpts...)
	pb.RegisterDriverServiceServer(srv, svc)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus(pb.DriverService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	return srv, hs
}

// setServing flips the health status once the sidecar can answer (its
// watch caches synced), or back when shutting down.
func setServing(hs *health.Server, serving bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if serving {
		st = healthpb.HealthCheckResponse_SERVING
	}
	hs.SetServingStatus("", st)
	hs.SetServingStatus(pb.DriverService_ServiceDesc.ServiceName, st)
}
