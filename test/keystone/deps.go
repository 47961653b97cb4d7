package keystone

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The Debian files Keystone needs (python3-keystone, uwsgi-core,
// uwsgi-plugin-python3, sqlite3). /usr/bin/python3 is Debian's interpreter:
// the one on PATH may not see dist-packages.
const (
	keystoneManage = "/usr/bin/keystone-manage"
	keystoneWSGI   = "/usr/bin/keystone-wsgi-public"
	uwsgiBinary    = "/usr/bin/uwsgi"
	uwsgiPython3   = "/usr/lib/uwsgi/plugins/python3_plugin.so"
	uwsgiHTTP      = "/usr/lib/uwsgi/plugins/http_plugin.so" // uwsgi-core
	python3        = "/usr/bin/python3"
	eggInfoGlob    = "/usr/lib/python3/dist-packages/keystone-*.egg-info"
)

// ErrMissingPackages says the Debian packages are not installed; the message
// tells what to run.
var ErrMissingPackages = errors.New("keystone: Debian packages missing: run hack/deps.sh (installs python3-keystone uwsgi-core uwsgi-plugin-python3 sqlite3)")

// checkDeps fails with ErrMissingPackages naming every missing file.
func checkDeps() error {
	err := checkFiles(keystoneManage, keystoneWSGI, uwsgiBinary, uwsgiPython3, uwsgiHTTP, python3)
	if _, verr := keystoneVersion(); verr != nil {
		err = errors.Join(err, fmt.Errorf("%w; not found: %s", ErrMissingPackages, eggInfoGlob))
	}
	return err
}

func checkFiles(files ...string) error {
	var missing []string
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w; not found: %s", ErrMissingPackages, strings.Join(missing, ", "))
	}
	return nil
}

// keystoneVersion is the installed python3-keystone release, e.g. "22.0.2";
// it keys the template cache so an upgrade rebuilds the database.
func keystoneVersion() (string, error) {
	matches, err := filepath.Glob(eggInfoGlob)
	if err != nil || len(matches) == 0 {
		return "", fmt.Errorf("no %s", eggInfoGlob)
	}
	base := strings.TrimSuffix(filepath.Base(matches[0]), ".egg-info")
	return strings.TrimPrefix(base, "keystone-"), nil
}
