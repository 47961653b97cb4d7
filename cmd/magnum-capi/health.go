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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// `magnum-capi health` asks a running sidecar's standard gRPC health service
// whether it is SERVING (its watch caches synced). Container health checks
// (Kolla's healthcheck_test, Docker's HEALTHCHECK) run it from the same
// image, so no grpc_health_probe binary has to be shipped. With --wait it
// polls until SERVING, for systemd's ExecStartPost and for recipes that
// restart magnum-conductor once the sidecar is ready.
func runHealth(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	f, code, done := parseHealthFlags(args, stderr)
	if done {
		return code
	}
	creds, err := healthCredentials(f.address, f.caFile, f.certFile, f.keyFile)
	if err != nil {
		fmt.Fprintln(stderr, "magnum-capi health:", err)
		return 2
	}
	conn, err := grpc.NewClient(f.address, grpc.WithTransportCredentials(creds))
	if err != nil {
		fmt.Fprintf(stderr, "magnum-capi health: --address %q: %v\n", f.address, err)
		return 2
	}
	defer conn.Close()
	st, err := pollHealth(ctx, healthpb.NewHealthClient(conn), f)
	if err != nil {
		fmt.Fprintf(stderr, "magnum-capi health: %s: %v\n", f.address, err)
		return 1
	}
	fmt.Fprintln(stdout, st)
	if st != healthpb.HealthCheckResponse_SERVING {
		return 1
	}
	return 0
}

// healthFlags are health's flags.
type healthFlags struct {
	address, service, caFile, certFile, keyFile string
	timeout, wait, interval                     time.Duration
}

// parseHealthFlags reads args; done with the exit code when the command
// ends here (0 for --help, 2 for bad flags).
func parseHealthFlags(args []string, stderr io.Writer) (healthFlags, int, bool) {
	var f healthFlags
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.address, "address", envOr("MAGNUM_CAPI_LISTEN", "unix:///run/magnum-capi/magnum-capi.sock"),
		"the sidecar's address: unix:///path or host:port")
	fs.StringVar(&f.service, "service", "", `the health service name to ask about ("" is the whole server)`)
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "how long to wait for each answer")
	fs.DurationVar(&f.wait, "wait", 0, "keep asking until SERVING for up to this `DURATION` (e.g. 5m): the sidecar is NOT_SERVING while its watch caches sync, and unreachable while it starts; 0 asks once")
	fs.DurationVar(&f.interval, "interval", time.Second, "with --wait, the pause between questions")
	fs.StringVar(&f.caFile, "tls-ca-file", "", "TCP: CA bundle that signed the sidecar's certificate")
	fs.StringVar(&f.certFile, "tls-cert-file", "", "TCP: client certificate (the sidecar requires one)")
	fs.StringVar(&f.keyFile, "tls-key-file", "", "TCP: key of --tls-cert-file")
	if code, done := parseFlags(fs, args); done {
		return f, code, true
	}
	if f.wait < 0 || f.timeout <= 0 || f.interval <= 0 {
		fmt.Fprintf(stderr, "magnum-capi health: --wait %s, --timeout %s, --interval %s: expected --wait >= 0 and positive --timeout and --interval\n", f.wait, f.timeout, f.interval)
		return f, 2, true
	}
	return f, 0, false
}

// pollHealth asks once, or with --wait until SERVING or the wait is over:
// NOT_SERVING and an unreachable or slow sidecar are asked again; any
// other error (an unknown --service) ends it at once. The last answer or
// error is returned.
func pollHealth(ctx context.Context, client healthpb.HealthClient, f healthFlags) (healthpb.HealthCheckResponse_ServingStatus, error) {
	deadline := time.Now().Add(f.wait)
	for {
		timeout := f.timeout
		if left := time.Until(deadline); f.wait > 0 && left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := client.Check(actx, &healthpb.HealthCheckRequest{Service: f.service}, grpc.WaitForReady(true))
		cancel()
		st := resp.GetStatus()
		if err == nil && st == healthpb.HealthCheckResponse_SERVING {
			return st, nil
		}
		retry := err == nil || status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded
		if !retry || time.Until(deadline) <= 0 || ctx.Err() != nil {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(min(f.interval, time.Until(deadline))):
		}
	}
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
