package magnum

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/test/debianroot"
)

// loadLikeMagnum is what magnum-api and magnum-conductor do with drivers,
// in a fresh interpreter with nothing of ours imported first: load
// Magnum's configuration (no [magnum_capi] registered yet), pick a driver
// through the magnum.drivers entry points by the image's tuple, and ask
// every installed driver what it provides (get_drivers() does, in both
// services).
const loadLikeMagnum = `
import magnum.conf
magnum.conf.CONF([], project="magnum")
from magnum.drivers.common import driver
chosen = driver.Driver.get_driver("vm", "ubuntu", "kubernetes")
print("chosen", type(chosen).__module__, type(chosen).__name__)
for entry_point, cls in driver.Driver.load_entry_points():
    if entry_point.name == "magnum_capi":
        print("provides", cls().provides)
`

// TestInstalledShimLoadsLikeMagnum installs the shim with the operator
// guide's commands into each release (this machine's Magnum 15, and 20 and
// 23 in their root file systems) and loads it as Magnum does; then checks
// that the release and the shim read every magnum.conf option the guide
// names. The shim once failed exactly here on every release
// (NoSuchOptError: no such option magnum_capi): its tests had always
// imported its options first. It runs before the lifecycles (this file
// sorts first), with the releases side by side: on a cold machine it builds
// the trixie and sid roots the lanes then reuse.
func TestInstalledShimLoadsLikeMagnum(t *testing.T) {
	dir := t.TempDir()
	shim, err := BuildShim(context.Background(), filepath.Join(dir, "shim"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range selectedReleases() {
		t.Run(rel.Name(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			ns, err := installOnly(ctx, t, filepath.Join(dir, rel.Name()), shim, rel)
			if err != nil {
				t.Fatal(err)
			}
			defer ns.Close()
			out, err := ns.Run(ctx, nil, "python3", "-c", loadLikeMagnum)
			if err != nil {
				t.Fatalf("Magnum %d cannot load the installed shim: %v", rel.Major, err)
			}
			for _, want := range []string{"chosen magnum_capi.driver Driver", "provides [{'server_type': 'vm', 'os': 'ubuntu', 'coe': 'kubernetes'}"} {
				if !strings.Contains(out, want) {
					t.Errorf("Magnum %d: %q not in\n%s", rel.Major, want, out)
				}
			}
			// oslo.config ignores options nobody registered: a misspelt or
			// obsolete option in the guide would silently do nothing.
			guide, plugins, err := GuideOptions()
			if err != nil {
				t.Fatal(err)
			}
			read, err := ReadOptions(ctx, ns, plugins)
			if err != nil {
				t.Fatal(err)
			}
			if unread := UnreadOptions(rel, guide, read); len(unread) > 0 {
				t.Errorf("Magnum %d and the shim read none of these options docs/operator-guide.md names: %s",
					rel.Major, strings.Join(unread, ", "))
			}
		})
	}
}

// installOnly is a release's namespace with the shim installed by the
// guide's block, and nothing started.
func installOnly(ctx context.Context, t *testing.T, dir, shim string, rel Release) (*Namespace, error) {
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	var ns *Namespace
	var err error
	if rel.Host {
		ns, err = StartNamespace(ctx, "/", "/", hostMounts(dir, run))
	} else {
		image, _, rootErr := debianroot.Ensure(ctx, rel.Suite, t.Logf)
		if rootErr != nil {
			return nil, rootErr
		}
		ns, err = StartNamespace(ctx, filepath.Join(dir, "root"), image, rootMounts(dir, image, run, shim))
	}
	if err != nil {
		return nil, err
	}
	if out, err := InstallShim(ctx, ns, shim); err != nil {
		ns.Close()
		return nil, fmt.Errorf("%w\n%s", err, out)
	}
	return ns, nil
}
