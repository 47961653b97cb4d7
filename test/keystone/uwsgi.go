package keystone

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/ports"
)

// serveTimeout bounds one uwsgi start: Keystone loads in about 2 s here, so
// a minute only runs out when something is wrong.
const serveTimeout = 60 * time.Second

// uwsgiProcess is one uwsgi master serving keystone-wsgi-public.
type uwsgiProcess struct {
	cmd  *exec.Cmd
	port int
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
}

// serve starts uwsgi on a free port and waits for GET /v3 to answer. The port
// is picked by binding :0 and releasing it, so another process can take it
// first; a bind failure is retried on a new port.
func serve(ctx context.Context, l layout) (*uwsgiProcess, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := ports.Free()
		if err != nil {
			return nil, err
		}
		p, err := startUwsgi(l, port)
		if err != nil {
			return nil, err
		}
		err = p.waitReady(ctx)
		if err == nil {
			return p, nil
		}
		p.stop()
		lastErr = err
		if !strings.Contains(readFile(l.uwsgiLog()), "Address already in use") {
			break
		}
	}
	return nil, fmt.Errorf("%w%s%s%s", lastErr, logTail(l.uwsgiStderr()), logTail(l.uwsgiLog()), logTail(l.keystoneLog()))
}

func startUwsgi(l layout, port int) (*uwsgiProcess, error) {
	cmd := exec.Command(uwsgiBinary,
		"--plugin", "python3,http",
		// uwsgi's HTTP router owns the client connections (keep-alive, as
		// Apache in front of a real Keystone) and hands one request at a
		// time to the single worker thread. Keystone must not run requests
		// on several threads here: oslo.concurrency finds eventlet
		// installed (not monkey-patched) and its locks then fail across
		// threads ("greenlet.error: cannot switch to a different thread"),
		// after which every request hangs.
		"--http", "127.0.0.1:"+strconv.Itoa(port),
		"--http-keepalive",
		"--wsgi-file", keystoneWSGI,
		"--master", "--processes", "1", "--threads", "1",
		// uwsgi's default backlog of 100 overflows when a benchmark creates
		// 100 clusters at once (each makes an application credential): the
		// router then closes the client's connection unanswered.
		"--listen", "1024",
		"--need-app",             // exit instead of serving 500s when Keystone fails to load
		"--die-on-term",          // SIGTERM stops master, router and worker
		"--buffer-size", "65535", // catalog-sized headers
		"--env", "OS_KEYSTONE_CONFIG_FILES="+l.conf(),
		"--logto", l.uwsgiLog(),
	)
	cmd.Dir = l.dir
	// Option errors come before --logto takes over: keep them too.
	stderr, err := os.Create(l.uwsgiStderr())
	if err != nil {
		return nil, err
	}
	defer stderr.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true, // Stop signals the whole group (master and workers)
		// A test binary killed without cleanup must not leave Keystone
		// running: the kernel sends SIGTERM when the parent dies.
		Pdeathsig: syscall.SIGTERM,
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("keystone: start uwsgi: %w", err)
	}
	p := &uwsgiProcess{cmd: cmd, port: port, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls GET /v3 until it answers 200, uwsgi exits, or the time is up.
func (p *uwsgiProcess) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, serveTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/v3", p.port)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("keystone: uwsgi exited before serving: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("keystone: %s did not answer within %s: %w", url, serveTimeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after 10 s.
func (p *uwsgiProcess) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	var exitErr *exec.ExitError
	if p.err != nil && !errors.As(p.err, &exitErr) {
		return p.err
	}
	return nil
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
