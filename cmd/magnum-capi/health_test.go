package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		{"wait: serving at once", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + socket, "--wait", "5s"}, 0, "SERVING"},
		{"wait: still syncing when the wait is over", healthpb.HealthCheckResponse_NOT_SERVING, []string{"--address", "unix://" + socket, "--wait", "300ms", "--interval", "50ms"}, 1, "NOT_SERVING"},
		{"wait: an unknown service is not waited for", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + socket, "--service", "nope", "--wait", "1h"}, 1, "NotFound"},
		{"wait: negative", healthpb.HealthCheckResponse_SERVING, []string{"--address", "unix://" + socket, "--wait", "-1s"}, 2, "expected --wait >= 0"},
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

// TestHealthWait: health --wait keeps asking while the sidecar syncs its
// caches (NOT_SERVING) and before its socket exists, and exits 0 once it
// is SERVING, as deploy/systemd's ExecStartPost and the operator guide's
// restart recipe rely on.
func TestHealthWait(t *testing.T) {
	tests := []struct {
		name string
		// start runs the server on socket after a while; hs is set
		// SERVING after another.
		listenAfter, servingAfter time.Duration
	}{
		{"caches syncing", 0, 500 * time.Millisecond},
		{"socket not there yet", 500 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "s.sock")
			hs := health.NewServer()
			hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
			srv := grpc.NewServer()
			healthpb.RegisterHealthServer(srv, hs)
			defer srv.Stop()
			go func() {
				time.Sleep(tt.listenAfter)
				lis, err := net.Listen("unix", socket)
				if err != nil {
					t.Error(err)
					return
				}
				go srv.Serve(lis)
				time.Sleep(tt.servingAfter)
				hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
			}()
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), []string{"health", "--address", "unix://" + socket, "--wait", "30s", "--interval", "50ms", "--timeout", "200ms"}, nil, &stdout, &stderr)
			if code != 0 || strings.TrimSpace(stdout.String()) != "SERVING" {
				t.Errorf("exit %d, output %q%q; want 0 and SERVING", code, stdout.String(), stderr.String())
			}
		})
	}
}
