package deploy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// jail runs a program the way an install way runs it, without a container
// engine or systemd (both are refused on this machine): in root (chroot),
// as uid:gid with no supplementary groups, with only env, and with binds
// (host directories mounted at paths under root, in a mount namespace of
// the process's own, as volumes are).
type jail struct {
	root     string
	uid, gid int
	env      []string
	binds    map[string]string // path in root → host directory
	// umask is the process's file mode creation mask; 0 leaves the test's.
	umask os.FileMode
	// noNewPrivs sets the no_new_privs bit (systemd's NoNewPrivileges=).
	noNewPrivs bool
}

// needRoot skips a test that changes users, chroots and mounts when the
// tests do not run as root (make test runs as root on the test machines).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("runs the sidecar as another user in a chroot: needs root")
	}
}

// command is argv run in the jail: a private mount namespace
// (unshare --mount), the binds, then chroot --userspec, which execs argv in
// the same process, so the Cmd's pid is argv's.
func (j jail) command(ctx context.Context, argv ...string) *exec.Cmd {
	var script strings.Builder
	script.WriteString("set -e\n")
	args := []string{"--mount", "--propagation", "private", "/bin/sh", "-c", "", "jail"}
	for in, host := range j.binds {
		args = append(args, host, filepath.Join(j.root, in))
		n := len(args) - 7
		fmt.Fprintf(&script, "/usr/bin/mount --bind \"$%d\" \"$%d\"\n", n-1, n)
	}
	if j.umask != 0 {
		fmt.Fprintf(&script, "umask %04o\n", j.umask)
	}
	setpriv := ""
	if j.noNewPrivs {
		setpriv = "/usr/bin/setpriv --no-new-privs "
	}
	fmt.Fprintf(&script, "shift %d\nexec %s/usr/sbin/chroot --userspec=%d:%d --groups=%d \"%s\" \"$@\"\n", len(j.binds)*2, setpriv, j.uid, j.gid, j.gid, j.root)
	args[5] = script.String()
	args = append(args, argv...)
	cmd := exec.CommandContext(ctx, "/usr/bin/unshare", args...)
	cmd.Env = j.env
	return cmd
}

// run runs argv in the jail to its end and returns its combined output.
func (j jail) run(ctx context.Context, argv ...string) (string, error) {
	out, err := j.command(ctx, argv...).CombinedOutput()
	return string(out), err
}

// process is a long-running program started in a jail: its standard error
// (the sidecar's JSON log) is collected.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has ended
	err  error         // how it ended, once done
	mu   sync.Mutex
	log  bytes.Buffer
}

// start starts argv in the jail; the test's cleanup kills it if it still runs.
func (j jail) start(t *testing.T, argv ...string) *process {
	t.Helper()
	p := &process{cmd: j.command(context.Background(), argv...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// wait waits for the process to end and returns how it ended.
func (p *process) wait() error {
	<-p.done
	return p.err
}

// exited tells whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// output is what the process wrote so far.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop sends SIGTERM (what docker stop, systemctl stop and the kubelet send)
// and waits for the exit.
func (p *process) stop(t *testing.T, within time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(within):
		t.Fatalf("still running %s after SIGTERM:\n%s", within, p.output())
		return nil
	}
}

// uids reads the real, effective, saved and filesystem uids of the process
// from /proc/<pid>/status.
func (p *process) uids(t *testing.T) []int {
	t.Helper()
	return procIDs(t, p.cmd.Process.Pid, "Uid:")
}

func procIDs(t *testing.T, pid int, field string) []int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			var ids []int
			for _, w := range strings.Fields(rest) {
				id, err := strconv.Atoi(w)
				if err != nil {
					t.Fatalf("/proc/%d/status %s%s: %v", pid, field, rest, err)
				}
				ids = append(ids, id)
			}
			return ids
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return nil
}

// waitFor polls cond until it holds or within passes, then fails with what.
func waitFor(t *testing.T, within time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what())
		}
		<-tick.C
	}
}
