package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// The stack and one sidecar, shared by the package's tests.
var (
	stack  *harness.Harness
	shared *harness.Sidecar
	driver pb.DriverServiceClient
	conn   *grpc.ClientConn
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
	defer cancel()
	var err error
	stack, err = harness.Start(ctx, harness.Options{Step: 100 * time.Millisecond, SecondManagementCluster: true})
	if err != nil {
		return 0, err
	}
	defer stack.Stop()
	if shared, err = stack.StartSidecar(ctx, harness.SidecarOptions{Name: "shared"}); err != nil {
		return 0, err
	}
	defer shared.Stop()
	driver, conn = shared.Driver, shared.Conn
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "sidecar log:", shared.LogFile, "(kept: the stack directory is removed on exit; copy it while the test runs)")
	}
	return code, nil
}
