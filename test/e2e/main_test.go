package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// The stack and one sidecar, shared by the package's tests.
var (
	stack  *harness.Harness
	driver pb.DriverServiceClient
	conn   *grpc.ClientConn
	logs   *os.File
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	var err error
	stack, err = harness.Start(ctx, harness.Options{Step: 100 * time.Millisecond, SecondManagementCluster: true})
	cancel()
	if err != nil {
		return 0, err
	}
	defer stack.Stop()

	socket := filepath.Join(stack.Info.Dir, "magnum-capi.sock")
	file := filepath.Join(stack.Info.Dir, "magnum-capi.yaml")
	if err := os.WriteFile(file, []byte(stack.SidecarConfig(socket)), 0o600); err != nil {
		return 0, err
	}
	cfg, err := config.Load(file, nil)
	if err != nil {
		return 0, err
	}
	if logs, err = os.Create(filepath.Join(stack.Info.Dir, "sidecar.log")); err != nil {
		return 0, err
	}
	sidecarCtx, stopSidecar := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Run(sidecarCtx, cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	defer func() {
		stopSidecar()
		<-done
	}()
	if conn, err = grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := waitServing(conn, done); err != nil {
		return 0, err
	}
	driver = pb.NewDriverServiceClient(conn)
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "sidecar log:", logs.Name(), "(kept: the stack directory is removed on exit; copy it while the test runs)")
	}
	return code, nil
}

// waitServing polls the standard health service until the sidecar's caches
// have synced.
func waitServing(conn *grpc.ClientConn, done <-chan error) error {
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("sidecar exited: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: pb.DriverService_ServiceDesc.ServiceName})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("sidecar not SERVING after 2 minutes")
}
