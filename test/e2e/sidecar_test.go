package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
)

// sidecar is a second sidecar on the test stack, apart from the package's
// shared one, configured for one test: another Kubernetes identity, metrics
// on, every log line kept.
type sidecar struct {
	client     pb.DriverServiceClient
	health     healthpb.HealthClient
	metricsURL string
	logFile    string
}

type sidecarOptions struct {
	// kubeconfig replaces the test bed's admin kubeconfig.
	kubeconfig string
	// waitServing false returns once the sidecar listens, without waiting
	// for the caches to sync.
	waitServing bool
	// wrap, when set, wraps the sidecar's management-cluster transport
	// (server.WithKubeTransport), e.g. to count its API requests.
	wrap func(http.RoundTripper) http.RoundTripper
}

// startSidecar runs server.Run in process on its own socket until the test
// ends, logging at debug level as JSON into a file.
func startSidecar(t *testing.T, opts sidecarOptions) *sidecar {
	t.Helper()
	dir := t.TempDir()
	socket := filepath.Join(dir, "magnum-capi.sock")
	metricsAddr := freeAddress(t)
	text := stack.SidecarConfig(socket)
	if opts.kubeconfig != "" {
		text = strings.Replace(text, "kubeconfig: "+stack.Info.Kubeconfig, "kubeconfig: "+opts.kubeconfig, 1)
	}
	text = strings.Replace(text, `metricsAddress: ""`, "metricsAddress: "+metricsAddr, 1)
	file := filepath.Join(dir, "magnum-capi.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "sidecar.log")
	logs, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var runOpts []server.RunOption
	if opts.wrap != nil {
		runOpts = append(runOpts, server.WithKubeTransport(opts.wrap))
	}
	go func() {
		done <- server.Run(ctx, cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), runOpts...)
	}()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		stop()
		if err := <-done; err != nil {
			t.Errorf("sidecar stopped: %v", err)
		}
		logs.Close()
		if t.Failed() {
			tail, _ := os.ReadFile(logFile)
			t.Logf("sidecar log (last 4 KiB):\n%s", lastBytes(tail, 4096))
		}
	})
	s := &sidecar{client: pb.NewDriverServiceClient(conn), health: healthpb.NewHealthClient(conn), metricsURL: "http://" + metricsAddr + "/metrics", logFile: logFile}
	if opts.waitServing {
		if err := waitServing(conn, done); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The socket exists once Run listens.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(socket); err == nil {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatal("the sidecar did not listen within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeAddress is a TCP address nothing listens on right now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// readObjects reads every object of the YAML files matching pattern.
func readObjects(t *testing.T, pattern string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj.Object) > 0 {
				out = append(out, obj)
			}
		}
	}
	return out
}

// createAll creates objects as the test bed's admin; existing ones are kept.
func createAll(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if err := stack.Env.Client.Create(context.Background(), obj.DeepCopy()); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// healthStatus asks the sidecar's health service about DriverService.
func (s *sidecar) healthStatus() (healthpb.HealthCheckResponse_ServingStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := s.health.Check(ctx, &healthpb.HealthCheckRequest{Service: pb.DriverService_ServiceDesc.ServiceName})
	if err != nil {
		return 0, err
	}
	return resp.GetStatus(), nil
}

func (s *sidecar) String() string { return fmt.Sprintf("sidecar(log %s)", s.logFile) }
