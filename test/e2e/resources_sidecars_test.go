package e2e

import (
	"log/slog"
	"testing"
)

// More sidecars on the shared stack, beside the package's own, all started
// by startSidecar (harness.StartSidecar): in process with an edited
// configuration, or as a magnum-capi serve process that a test can kill.

// sidecarBinary is the magnum-capi binary sidecar processes run
// (harness.SidecarBinary).
func sidecarBinary(t *testing.T) string {
	t.Helper()
	bin, err := stack.SidecarBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
