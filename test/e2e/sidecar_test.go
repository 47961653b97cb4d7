package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// startSidecar starts a sidecar on the shared stack for one test
// (harness.StartSidecar: in process unless opts.Binary is set), stopped
// when the test ends; a failed test logs the tail of its log.
func startSidecar(t *testing.T, opts harness.SidecarOptions) *harness.Sidecar {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc, err := stack.StartSidecar(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sc.Stop(); err != nil && opts.Binary == "" {
			t.Errorf("sidecar %s stopped: %v", sc.Name, err)
		}
		if t.Failed() {
			tail, _ := os.ReadFile(sc.LogFile)
			t.Logf("sidecar %s log %s (last 4 KiB):\n%s", sc.Name, sc.LogFile, lastBytes(tail, 4096))
		}
	})
	return sc
}

// withKubeconfig reaches the first management cluster through another
// kubeconfig (another identity, or a proxy).
func withKubeconfig(kubeconfig string) func(*config.Config) {
	return func(c *config.Config) { c.ManagementClusters[0].Kubeconfig = kubeconfig }
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

// healthStatus asks a sidecar's health service about DriverService.
func healthStatus(sc *harness.Sidecar) (healthpb.HealthCheckResponse_ServingStatus, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := sc.Health.Check(ctx, &healthpb.HealthCheckRequest{Service: pb.DriverService_ServiceDesc.ServiceName})
	if err != nil {
		return 0, err
	}
	return resp.GetStatus(), nil
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
