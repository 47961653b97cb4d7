package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSystemdUnit has systemd parse the unit (systemd-analyze verify
// reports unknown keys, bad values and a missing ExecStart binary) and
// checks the choices the operator guide relies on.
func TestSystemdUnit(t *testing.T) {
	raw, err := os.ReadFile("systemd/magnum-capi.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(raw)
	for _, want := range []string{
		"ExecStart=/usr/local/bin/magnum-capi serve --config /etc/magnum-capi/magnum-capi.yaml",
		"User=magnum", "RuntimeDirectory=magnum-capi",
		// Started once SERVING, without failing while caches sync.
		"ExecStartPost=-/usr/local/bin/magnum-capi health --wait 5m", "TimeoutStartSec=6min", "CacheDirectory=magnum-capi", "RestartPreventExitStatus=2",
	} {
		if !strings.Contains(unit, want+"\n") {
			t.Errorf("the unit lacks %q", want)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatalf("systemd-analyze (Debian package systemd) is needed to check the unit: %v", err)
	}
	// verify insists that ExecStart's binary exists: point it at this test's
	// own executable.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "magnum-capi.service")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(unit, "/usr/local/bin/magnum-capi", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", file).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
