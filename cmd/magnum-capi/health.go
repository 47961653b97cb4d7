package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// `magnum-capi health` asks a running sidecar's standard gRPC health service
// whether it is SERVING (its watch caches synced). Container health checks
// (Kolla's healthcheck_test, Docker's HEALTHCHECK) run it from the same
// image, so no grpc_health_probe binary has to be shipped.
func runHealth(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	address := fs.String("address", envOr("MAGNUM_CAPI_LISTEN", "unix:///run/magnum-capi/magnum-capi.sock"),
		"the sidecar's address: unix:///path or host:port")
	service := fs.String("service", "", `the health service name to ask about ("" is the whole server)`)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	caFile := fs.String("tls-ca-file", "", "TCP: CA bundle that signed the sidecar's certificate")
	certFile := fs.String("tls-cert-file", "", "TCP: client certificate (the sidecar requires one)")
	keyFile := fs.String("tls-key-file", "", "TCP: key of --tls-cert-file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	creds, err := healthCredentials(*address, *caFile, *certFile, *keyFile)
	if err != nil {
		fmt.Fprintln(stderr, "magnum-capi health:", err)
		return 2
	}
	conn, err := grpc.NewClient(*address, grpc.WithTransportCredentials(creds))
	if err != nil {
		fmt.Fprintf(stderr, "magnum-capi health: --address %q: %v\n", *address, err)
		return 2
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: *service}, grpc.WaitForReady(true))
	if err != nil {
		fmt.Fprintf(stderr, "magnum-capi health: %s: %v\n", *address, err)
		return 1
	}
	fmt.Fprintln(stdout, resp.GetStatus())
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return 1
	}
	return 0
}

// healthCredentials: nothing for the unix socket (file permissions guard
// it), mutual TLS for TCP (the sidecar refuses anything else).
func healthCredentials(address, caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	if strings.HasPrefix(address, "unix://") {
		return insecure.NewCredentials(), nil
	}
	if caFile == "" || certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("--address %s is TCP: the sidecar requires mutual TLS; set --tls-ca-file, --tls-cert-file and --tls-key-file", address)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("--tls-ca-file: no PEM certificate found in " + caFile)
	}
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}), nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
