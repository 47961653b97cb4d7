package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/config"
)

// TestExampleConfig loads deploy/config/magnum-capi.yaml exactly as `serve`
// does (unknown options are errors, then every check), with its
// /etc/magnum-capi files stood in by temporary ones, and checks that it
// shows every option.
func TestExampleConfig(t *testing.T) {
	raw, err := os.ReadFile("config/magnum-capi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"kubeconfig", "clouds.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "magnum-capi.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(raw), "/etc/magnum-capi/", dir+"/")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, nil)
	if err != nil {
		t.Fatalf("the example configuration does not load: %v", err)
	}
	if cfg.Listen != "unix:///run/magnum-capi/magnum-capi.sock" {
		t.Errorf("the example listens on %s, not the shim's default socket", cfg.Listen)
	}
	for _, o := range config.Options() {
		leaf := o.Key[strings.LastIndexAny(o.Key, ".]")+1:]
		if !regexp.MustCompile(`(?m)^[ #-]*` + regexp.QuoteMeta(leaf) + `:`).Match(raw) {
			t.Errorf("the example does not show option %s", o.Key)
		}
	}
}
