package server

import (
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestListenSocketPermissions: only the sidecar's user (0600), or also one
// group (0660), may connect to the socket Magnum calls.
func TestListenSocketPermissions(t *testing.T) {
	gid := os.Getgid()
	groupName := strconv.Itoa(gid)
	if g, err := user.LookupGroupId(groupName); err == nil {
		groupName = g.Name
	}
	tests := []struct {
		name     string
		group    string
		wantMode fs.FileMode
	}{
		{"owner only", "", 0o600},
		{"group by id", strconv.Itoa(gid), 0o660},
		{"group by name", groupName, 0o660},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run", "magnum-capi.sock")
			l, err := Listen("unix://"+path, tt.group)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode()&fs.ModeSocket == 0 || info.Mode().Perm() != tt.wantMode {
				t.Errorf("socket mode %v, want a socket with %v", info.Mode(), tt.wantMode)
			}
			if tt.group != "" {
				if got := info.Sys().(*syscall.Stat_t).Gid; int(got) != gid {
					t.Errorf("socket group %d, want %d", got, gid)
				}
			}
		})
	}
}

func TestListenRefusals(t *testing.T) {
	dir := t.TempDir()
	notSocket := filepath.Join(dir, "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.sock")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name, address, group, want string
	}{
		{"no path", "unix://", "", "has no socket path"},
		{"a regular file in the way", "unix://" + notSocket, "", "is not a socket"},
		{"another sidecar serving", "unix://" + live, "", "another process is serving"},
		{"unknown group", "unix://" + filepath.Join(dir, "g.sock"), "no-such-group-magnum-capi", `socket group "no-such-group-magnum-capi"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Listen(tt.address, tt.group)
			if err == nil {
				l.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// A socket left by a crashed sidecar is replaced, with fresh permissions.
func TestListenReplacesStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stale.sock")
	old, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the file, close the listener: what a SIGKILLed process leaves.
	old.(*net.UnixListener).SetUnlinkOnClose(false)
	old.Close()
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	l, err := Listen("unix://"+path, "")
	if err != nil {
		t.Fatalf("a stale socket was not replaced: %v", err)
	}
	defer l.Close()
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("replaced socket mode %v, want 0600", info.Mode().Perm())
	}
}
