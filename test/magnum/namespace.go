package magnum

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A Namespace is a private mount namespace in which one Magnum release
// runs: Debian's own files (this machine's, or a debootstrapped root's
// under an overlay), with the directories a test run writes to mounted over
// them. Several test runs share this machine and its cached roots; each run
// sees its own /usr/local (the installed shim), its own writable root, and
// nothing it mounts is visible outside. The namespace lives as long as its
// holder process, which exits when its stdin closes (Close, or the test
// process dying).
type Namespace struct {
	// Root is the directory processes are chrooted to ("/" on this
	// machine's own release).
	Root string
	// Python is the root's Python version, e.g. "3.11" (its
	// /usr/local/lib/python3.X/dist-packages is where pip installs).
	Python string

	holder *exec.Cmd
	stdin  io.WriteCloser
	pid    int
}

// Mount is one mount made in the namespace before anything runs there.
type Mount struct {
	// Overlay at Target: Lower's content (Target's own when empty) below,
	// Upper (written to by processes in the namespace) on top. Work is
	// overlayfs's scratch directory on Upper's filesystem.
	Lower, Upper, Work string
	// Bind mounts Source at Target (recursively).
	Source string
	// Proc mounts a fresh /proc at Target.
	Proc bool
	// Tmpfs mounts an empty tmpfs at Target.
	Tmpfs bool
	// Target is the path the mount appears at, seen from outside the
	// chroot (Root is prefixed by the caller for paths inside it).
	Target string
}

func (m Mount) script() string {
	q := shellQuote
	switch {
	case m.Upper != "":
		lower := m.Lower
		if lower == "" {
			lower = m.Target
		}
		return fmt.Sprintf("mkdir -p %s %s %s && mount -t overlay overlay -o %s %s",
			q(m.Upper), q(m.Work), q(m.Target),
			q("lowerdir="+lower+",upperdir="+m.Upper+",workdir="+m.Work), q(m.Target))
	case m.Tmpfs:
		return fmt.Sprintf("mkdir -p %s && mount -t tmpfs tmpfs %s", q(m.Target), q(m.Target))
	case m.Proc:
		return fmt.Sprintf("mkdir -p %s && mount -t proc proc %s", q(m.Target), q(m.Target))
	default:
		return fmt.Sprintf("mkdir -p %s && mount --rbind %s %s", q(m.Target), q(m.Source), q(m.Target))
	}
}

// StartNamespace makes the mounts, in order, in a new private mount
// namespace and keeps it alive until Close. root is where processes are
// chrooted to inside it; image is the directory holding the release's
// files as seen from outside (the same as root on this machine's release,
// the cached root file system under root's overlay otherwise).
func StartNamespace(ctx context.Context, root, image string, mounts []Mount) (*Namespace, error) {
	lines := []string{"set -e"}
	for _, m := range mounts {
		lines = append(lines, m.script())
	}
	lines = append(lines, "echo ready", "exec cat >/dev/null")
	holder := exec.Command("unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", strings.Join(lines, "\n"))
	var stderr bytes.Buffer
	holder.Stderr = &stderr
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := holder.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := holder.Start(); err != nil {
		return nil, fmt.Errorf("unshare (util-linux) for a private mount namespace: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("unexpected %q", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(time.Minute):
		err = fmt.Errorf("timed out")
	}
	if err != nil {
		stdin.Close()
		_ = holder.Process.Kill()
		_ = holder.Wait()
		return nil, fmt.Errorf("setting up the mount namespace: %v: %s", err, stderr.String())
	}
	ns := &Namespace{Root: root, holder: holder, stdin: stdin, pid: holder.Process.Pid}
	if ns.Python, err = pythonVersion(image); err != nil {
		ns.Close()
		return nil, err
	}
	return ns, nil
}

// pythonVersion is the version of the root's Debian python3, from its
// stdlib directory (python3.X with an os.py).
func pythonVersion(root string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(root, "usr", "lib", "python3.*", "os.py"))
	if len(matches) != 1 {
		return "", fmt.Errorf("no single Python 3 in %s (found %v)", root, matches)
	}
	return strings.TrimPrefix(filepath.Base(filepath.Dir(matches[0])), "python"), nil
}

// Command is a command run inside the namespace (chrooted to Root), with a
// clean environment: PATH as a service has it, plus env.
func (ns *Namespace) Command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	full := []string{"--mount=/proc/" + fmt.Sprint(ns.pid) + "/ns/mnt", "--"}
	if ns.Root != "/" {
		full = append(full, "chroot", ns.Root)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "nsenter", full...)
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "HOME=/root",
	}, env...)
	cmd.Dir = "/"
	// The test killed without cleanup must not leave services behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// Run runs a command in the namespace and returns its combined output; the
// error carries the output.
func (ns *Namespace) Run(ctx context.Context, env []string, args ...string) (string, error) {
	out, err := ns.Command(ctx, env, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// WriteFile writes a file inside the namespace (through its overlays, as a
// process there would), creating its directory.
func (ns *Namespace) WriteFile(ctx context.Context, path string, data []byte, mode os.FileMode) error {
	cmd := ns.Command(ctx, nil, "/bin/sh", "-c", `mkdir -p "$(dirname "$1")" && cat > "$1" && chmod "$2" "$1"`,
		"sh", path, fmt.Sprintf("%o", mode))
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("writing %s: %w: %s", path, err, out)
	}
	return nil
}

// Close ends the holder; the mounts go once the last process in the
// namespace has exited.
func (ns *Namespace) Close() {
	if ns.holder == nil {
		return
	}
	ns.stdin.Close()
	done := make(chan struct{})
	go func() { _ = ns.holder.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-ns.pid, syscall.SIGKILL)
		<-done
	}
	ns.holder = nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
