package keystone

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// When Keystone cannot load, serve must fail fast and quote uwsgi's log.
func TestServeFailureQuotesTheLog(t *testing.T) {
	if err := checkDeps(); err != nil {
		t.Fatal(err)
	}
	l := layout{dir: t.TempDir()}
	if err := os.MkdirAll(l.logDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	// A keystone.conf Keystone cannot parse: the app does not load and
	// --need-app makes uwsgi exit.
	if err := os.WriteFile(filepath.Join(l.dir, "keystone.conf"), []byte("[token\nprovider = \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := serve(ctx, l)
	if err == nil {
		p.stop()
		t.Fatal("serve succeeded with a broken keystone.conf")
	}
	for _, want := range []string{"uwsgi exited before serving", "uwsgi.log (tail)", "uWSGI"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}
