// Package realcapi starts the test bed's real Cluster API controllers
// (test/capicontrollers, its own Go module) as a process against a
// management cluster, and sets their fault rules.
//
// It is test-only code; the product never imports it.
package realcapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// Options tune the controllers. Kubeconfig is required.
type Options struct {
	// Kubeconfig is an admin kubeconfig of the management cluster.
	Kubeconfig string
	// Dir receives the binary's log (capi-controllers.log) and its webhook
	// certificate.
	Dir string
	// Step is OpenStack's pace in the fake provider (0: its default).
	Step time.Duration
	// Out, when set, also receives the log.
	Out io.Writer
}

// Controllers is a running controllers process.
type Controllers struct {
	cmd     *exec.Cmd
	LogPath string
	done    chan error
	once    sync.Once
	stopErr error
}

// BinaryEnv names a prebuilt capi-controllers binary to run instead of
// building one (make build writes bin/capi-controllers).
const BinaryEnv = "MAGNUM_CAPI_CONTROLLERS_BIN"

// ModuleDir is the controllers' Go module.
func ModuleDir() string { return filepath.Join(testbed.RepoRoot(), "test", "capicontrollers") }

// Build compiles the controllers into dir and returns the binary's path;
// Go's build cache makes a rebuild of unchanged sources a link step.
func Build(ctx context.Context, dir string) (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin, nil
	}
	out := filepath.Join(dir, "capi-controllers")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/capi-controllers")
	cmd.Dir = ModuleDir()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the Cluster API controllers: %w: %s", err, b)
	}
	return out, nil
}

// capiDir is the sigs.k8s.io/cluster-api module the controllers build
// with, for its webhook manifests.
func capiDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api")
	cmd.Dir = ModuleDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the controllers' sigs.k8s.io/cluster-api module: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Start builds and starts the controllers and waits until they are ready
// (caches synced, webhooks registered). ctx bounds the start only.
func Start(ctx context.Context, opts Options) (*Controllers, error) {
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	bin, err := Build(ctx, opts.Dir)
	if err != nil {
		return nil, err
	}
	modDir, err := capiDir(ctx)
	if err != nil {
		return nil, err
	}
	// Tuned for a test bed: connection retries as Cluster API's own envtest
	// suites tune them (see test/capicontrollers/capi.go), and no limit of
	// one reconcile per object per second (a beta feature of v1.13, on by
	// default), which would make every step of every object wait.
	args := []string{"-kubeconfig", opts.Kubeconfig, "-capi-dir", modDir, "-work-dir", filepath.Join(opts.Dir, "work"),
		"-connection-retry", "1s", "-feature-gates", "ReconcilerRateLimiting=false"}
	if opts.Step > 0 {
		args = append(args, "-step", opts.Step.String())
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "work"), 0o700); err != nil {
		return nil, err
	}
	c := &Controllers{LogPath: filepath.Join(opts.Dir, "capi-controllers.log"), done: make(chan error, 1)}
	logFile, err := os.Create(c.LogPath)
	if err != nil {
		return nil, err
	}
	var logs io.Writer = logFile
	if opts.Out != nil {
		logs = io.MultiWriter(logFile, opts.Out)
	}
	// Not CommandContext: ctx bounds the start, the process runs until Stop.
	c.cmd = exec.Command(bin, args...)
	c.cmd.Stderr = logs
	// Killed with the test process however it ends (go test's -timeout runs
	// no deferred Stop), so no controllers outlive their test bed.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	ready := make(chan struct{})
	go func() {
		scanner := bufio.NewScanner(stdout)
		signalled := false
		for scanner.Scan() {
			if scanner.Text() == "ready" && !signalled {
				close(ready)
				signalled = true
			}
		}
	}()
	go func() {
		err := c.cmd.Wait()
		logFile.Close()
		c.done <- err
	}()
	select {
	case <-ready:
		return c, nil
	case err := <-c.done:
		return nil, fmt.Errorf("the Cluster API controllers exited while starting (%v); log: %s", err, tail(c.LogPath))
	case <-ctx.Done():
		_ = c.Stop()
		return nil, fmt.Errorf("the Cluster API controllers did not become ready: %w; log: %s", ctx.Err(), tail(c.LogPath))
	}
}

// Stop asks the process to stop (it removes its webhook registrations on
// the way out) and waits for it; it is killed after 30 seconds. Safe to
// call more than once.
func (c *Controllers) Stop() error {
	c.once.Do(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-c.done:
			var exit *exec.ExitError
			if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 0) {
				c.stopErr = fmt.Errorf("the Cluster API controllers: %w; log: %s", err, tail(c.LogPath))
			}
		case <-time.After(30 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
			c.stopErr = errors.New("the Cluster API controllers did not stop within 30s and were killed")
		}
	})
	return c.stopErr
}

// tail is the end of a log file, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
