package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// More sidecars on the shared stack, beside the package's own, all started
// by startSidecar (harness.StartSidecar): in process with an edited
// configuration, or as a magnum-capi serve process that a test can kill.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// sidecarBinary is MAGNUM_CAPI_BIN (make passes what `make build` built),
// or this tree's magnum-capi built once into the stack's directory.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binPath = os.Getenv("MAGNUM_CAPI_BIN"); binPath != "" {
			return
		}
		binPath = filepath.Join(stack.Info.Dir, "bin", "magnum-capi-sidecar")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/magnum-capi/magnum-capi/cmd/magnum-capi").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./cmd/magnum-capi: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
