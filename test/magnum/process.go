package magnum

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/debianroot"
)

// process is one service the test started, with its output in a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProcess starts cmd with stdout and stderr appended to log, in its own
// process group (Stop signals every child), killed if the test dies.
func startProcess(name string, cmd *exec.Cmd, log string) (*process, error) {
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig to the process group and waits; after timeout it kills the
// group.
func (p *process) stop(sig syscall.Signal, timeout time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// waitFor polls ready until it is true, the process exits, or timeout.
func (p *process) waitFor(ctx context.Context, what string, timeout time.Duration, ready func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		if ready() {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before %s%s", p.name, p.err, what, debianroot.TailFile(p.log, 30))
		case <-ctx.Done():
			return fmt.Errorf("%s: timed out after %s waiting for %s%s", p.name, timeout, what, debianroot.TailFile(p.log, 30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// listening reports whether something accepts connections on the port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
