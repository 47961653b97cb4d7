package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Listen opens the sidecar's listener from an address: unix:///path (the
// socket shared with magnum-conductor) or host:port (TCP; the caller must
// require mTLS). A stale socket left by a crash is removed; a socket another
// live process serves is not. The socket is created 0600, or 0660 owned by
// group when group is given, so only Magnum can call the sidecar.
func Listen(address, group string) (net.Listener, error) {
	path, isUnix := strings.CutPrefix(address, "unix://")
	if !isUnix {
		return net.Listen("tcp", address)
	}
	if path == "" {
		return nil, fmt.Errorf("listen address %q has no socket path", address)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	// The umask makes the socket 0600 from the moment it exists: there is no
	// window in which another user could connect.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if group != "" {
		if err := shareWithGroup(path, group); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

func removeStaleSocket(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("another process is serving %s", path)
	}
	return os.Remove(path)
}

func shareWithGroup(path, group string) error {
	gid, err := strconv.Atoi(group)
	if err != nil {
		g, lerr := user.LookupGroup(group)
		if lerr != nil {
			return fmt.Errorf("socket group %q: %w", group, lerr)
		}
		gid, _ = strconv.Atoi(g.Gid)
	}
	if err := os.Chown(path, -1, gid); err != nil {
		return fmt.Errorf("socket group %q: %w", group, err)
	}
	return os.Chmod(path, 0o660)
}
