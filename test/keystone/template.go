package keystone

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Fixed bootstrap identity of every instance. Tests only: the database is
// copied from a per-machine template, so the password cannot differ per run.
const (
	AdminUser     = "admin"
	AdminPassword = "keystone-test-admin"
	AdminProject  = "admin"
	Region        = "RegionOne"
	DefaultDomain = "default"
)

// templateVersion changes when the template's content or layout changes, so
// caches built by an older version of this package are not reused.
const templateVersion = "1"

// ensureTemplate returns a directory holding a migrated, bootstrapped
// keystone.db (WAL mode) and fernet/credential key repositories, building it
// on first use. db_sync and bootstrap take about 6 s of the 9 s a cold start
// costs; copying the result takes milliseconds.
func ensureTemplate(ctx context.Context) (layout, error) {
	version, err := keystoneVersion()
	if err != nil {
		return layout{}, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "magnum-capi", "keystone")
	final := layout{dir: filepath.Join(root, fmt.Sprintf("keystone-%s-t%s", version, templateVersion))}
	if _, err := os.Stat(filepath.Join(final.dir, "complete")); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return layout{}, err
	}
	build, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return layout{}, err
	}
	defer os.RemoveAll(build)
	if err := buildTemplate(ctx, layout{dir: build}); err != nil {
		return layout{}, err
	}
	if err := os.WriteFile(filepath.Join(build, "complete"), nil, 0o600); err != nil {
		return layout{}, err
	}
	// Two test binaries may build at once: the first rename wins and the
	// other one's copy is thrown away.
	if err := os.Rename(build, final.dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(final.dir, "complete")); statErr != nil {
			return layout{}, fmt.Errorf("keystone: install template: %w", err)
		}
	}
	return final, nil
}

func buildTemplate(ctx context.Context, l layout) error {
	if err := l.writeConf(); err != nil {
		return err
	}
	// WAL before the schema exists: the journal mode is stored in the
	// database file, so every later connection (db_sync, bootstrap, uwsgi)
	// uses it.
	if err := enableWAL(ctx, l.db()); err != nil {
		return err
	}
	if err := manage(ctx, l, "db_sync"); err != nil {
		return err
	}
	for _, dir := range []string{l.fernetKeys(), l.credentialKeys()} {
		if err := writeFernetRepository(dir); err != nil {
			return err
		}
	}
	return manage(ctx, l, "bootstrap",
		"--bootstrap-username", AdminUser,
		"--bootstrap-password", AdminPassword,
		"--bootstrap-project-name", AdminProject,
		"--bootstrap-role-name", "admin",
		"--bootstrap-region-id", Region)
}

// manage runs keystone-manage. It prints an eventlet AttributeError at
// interpreter exit and still exits 0, so only the exit status counts.
func manage(ctx context.Context, l layout, args ...string) error {
	full := append([]string{"--config-file", l.conf()}, args...)
	cmd := exec.CommandContext(ctx, keystoneManage, full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("keystone-manage %s: %w\n%s%s", args[0], err, tail(out.Bytes(), 4000), logTail(l.keystoneLog()))
	}
	return nil
}

// enableWAL switches the SQLite file to WAL, with the sqlite3 CLI or, when it
// is missing, Python's sqlite3 module.
func enableWAL(ctx context.Context, db string) error {
	var cmd *exec.Cmd
	if path, err := exec.LookPath("sqlite3"); err == nil {
		cmd = exec.CommandContext(ctx, path, db, "PRAGMA journal_mode=WAL;")
	} else {
		cmd = exec.CommandContext(ctx, python3, "-c",
			"import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL').fetchone()[0])", db)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("keystone: enable WAL: %w: %s", err, out)
	}
	if !strings.Contains(strings.ToLower(string(out)), "wal") {
		return fmt.Errorf("keystone: enable WAL: journal mode is %q", strings.TrimSpace(string(out)))
	}
	return nil
}

// writeFernetRepository does what keystone-manage fernet_setup and
// credential_setup do (key 0 staged, key 1 primary; each a url-safe base64
// 32-byte key) without two Python start-ups.
func writeFernetRepository(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, name := range []string{"0", "1"} {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(base64.URLEncoding.EncodeToString(key)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// copyTemplate copies the database and key repositories into an instance.
func copyTemplate(from, to layout) error {
	for _, f := range []string{"keystone.db", "keystone.db-wal", "keystone.db-shm"} {
		if err := copyFile(filepath.Join(from.dir, f), filepath.Join(to.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	for _, d := range []string{"fernet-keys", "credential-keys"} {
		src, dst := filepath.Join(from.dir, d), filepath.Join(to.dir, d)
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tail keeps the last n bytes of a log for an error message.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	return fmt.Sprintf("\n--- %s (tail) ---\n%s", path, tail(b, 8000))
}
