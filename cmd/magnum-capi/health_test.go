package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestHealth runs the command against a real gRPC server carrying the
// standard health service, as the sidecar does.
func TestHealth(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "s.sock")
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(lis)
	defer srv.Stop()

	tests := []struct {
		name     string
		status   healthpb.HealthCheckResponse_ServingStatus
		args     []string
		wantCode int
		wantOut  string
	}{
		{"serving", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + socket}, 0, "SERVING"},
		{"syncing", healthpb.HealthCheckResponse_NOT_SERVING, []string{"--address", "unix://" + socket}, 1, "NOT_SERVING"},
		{"no sidecar", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + filepath.Join(t.TempDir(), "none.sock"), "--timeout", "300ms"}, 1, "DeadlineExceeded"},
		{"tcp without a client certificate", healthpb.HealthCheckResponse_SERVING, []string{"--address", "127.0.0.1:1"}, 2, "requires mutual TLS"},
		{"unknown service", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + socket, "--service", "nope"}, 1, "NotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs.SetServingStatus("", tt.status)
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), append([]string{"health"}, tt.args...), nil, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stdout.String()+stderr.String(), tt.wantOut) {
				t.Errorf("exit %d, output %q%q; want exit %d mentioning %q", code, stdout.String(), stderr.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}
