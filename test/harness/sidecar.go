package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
)

// The one way tests start a sidecar on the stack: Go end-to-end tests and
// benchmarks in process (server.New and Serve) or as the magnum-capi binary
// (`serve --config FILE`, as deploy/ starts it), and the Python tests and
// the demo through test/cmd/testbed, which starts them as processes. Every
// sidecar gets its configuration as a typed config.Config (SidecarConfig,
// then SidecarOptions.Configure), written to a file for a process.

// SidecarOptions are a sidecar's typed options; the zero value is the
// stack's sidecar, in process, returning once it serves.
type SidecarOptions struct {
	// Name names its socket, configuration and log files; "sidecar" when
	// empty.
	Name string
	// Dir holds those files; a new directory in the stack's when empty. A
	// sidecar started again in the same Dir listens on the same socket.
	Dir string
	// Configure changes the stack's configuration (SidecarConfig) for this
	// sidecar; the result is validated.
	Configure func(*config.Config)
	// Metrics serves /metrics (and /healthz) on a free 127.0.0.1 port.
	Metrics bool
	// Binary, when set, runs that magnum-capi binary as a process instead
	// of the sidecar in this process.
	Binary string
	// Env is a process's extra environment (MAGNUM_CAPI_* overrides).
	Env []string
	// KubeTransport wraps the management-cluster transport of an
	// in-process sidecar (server.WithKubeTransport), e.g. to count its API
	// requests.
	KubeTransport func(http.RoundTripper) http.RoundTripper
	// WaitListening returns once the socket exists, without waiting for the
	// watch caches to sync (SERVING).
	WaitListening bool
}

// Sidecar is a running sidecar and a client of it.
type Sidecar struct {
	Name       string
	Config     config.Config
	Socket     string
	ConfigFile string // a process's configuration file; "" in process
	LogFile    string
	// MetricsURL is its /metrics URL; "" without SidecarOptions.Metrics.
	MetricsURL string
	Conn       *grpc.ClientConn
	Driver     pb.DriverServiceClient
	Health     healthpb.HealthClient

	cmd      *exec.Cmd // nil in process
	stop     func()
	done     chan error // receives how it ended, once
	stopOnce sync.Once
	exitErr  error
}

// SidecarConfig is the configuration of a sidecar on this stack listening
// on the unix socket at socket: every management cluster, the chart
// repository, Keystone and the service identity, debug logs, no metrics.
func (h *Harness) SidecarConfig(socket string) config.Config {
	c := config.Default()
	c.Listen = "unix://" + socket
	c.MetricsAddress = ""
	c.Log = config.Log{Level: "debug", Format: "json"}
	c.ManagementClusters = []config.ManagementCluster{{Name: "default", Kubeconfig: h.Info.Kubeconfig}}
	if h.SecondEnv != nil {
		c.ManagementClusters = append(c.ManagementClusters, config.ManagementCluster{Name: SecondManagementClusterName, Kubeconfig: h.SecondEnv.KubeconfigPath})
	}
	c.Chart.Repository, c.Chart.Name, c.Chart.Version = h.Info.ChartRepository, h.Info.ChartName, h.Info.ChartVersion
	// Shared by every sidecar of the stack, as by replicas on one host.
	c.Chart.CacheDir = filepath.Join(h.Info.Dir, "chart-cache")
	c.OpenStack.CloudsFile, c.OpenStack.Cloud, c.OpenStack.AuthURL = h.Info.ServiceCloudsFile, h.Info.ServiceCloud, h.Info.AuthURL
	c.Timeouts.Lock = 15 * time.Second
	return c
}

// WriteSidecarConfig writes the configuration file of a sidecar on this
// stack listening at socket (`make testbed` offers it to people).
func (h *Harness) WriteSidecarConfig(path, socket string) error {
	raw, err := config.YAML(h.SidecarConfig(socket))
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o600)
}

// StartSidecar starts a sidecar on the stack and connects to it; ctx bounds
// the start (until it serves, or listens with WaitListening). Stop it with
// Stop.
func (h *Harness) StartSidecar(ctx context.Context, opts SidecarOptions) (_ *Sidecar, err error) {
	s, err := h.newSidecar(opts)
	if err != nil {
		return nil, err
	}
	if opts.Binary != "" {
		err = s.startProcess(opts)
	} else {
		err = s.startInProcess(opts)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if s.Conn, err = grpc.NewClient("unix://"+s.Socket, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return nil, err
	}
	s.Driver, s.Health = pb.NewDriverServiceClient(s.Conn), healthpb.NewHealthClient(s.Conn)
	if opts.WaitListening {
		err = s.waitListening(ctx)
	} else {
		err = WaitServing(ctx, s.Conn, s.done)
	}
	if err != nil {
		return nil, fmt.Errorf("sidecar %s (log %s): %w", s.Name, s.LogFile, err)
	}
	return s, nil
}

// SidecarLogFile is where a sidecar named name started in dir logs: a
// caller whose StartSidecar failed (and so has no Sidecar) reads it there.
func SidecarLogFile(dir, name string) string { return filepath.Join(dir, name+".log") }

// newSidecar lays out the sidecar's files and its configuration.
func (h *Harness) newSidecar(opts SidecarOptions) (*Sidecar, error) {
	s := &Sidecar{Name: opts.Name, done: make(chan error, 1)}
	if s.Name == "" {
		s.Name = "sidecar"
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp(h.Info.Dir, s.Name+"-"); err != nil {
			return nil, err
		}
	}
	s.Socket, s.LogFile = filepath.Join(dir, "grpc.sock"), SidecarLogFile(dir, s.Name)
	s.Config = h.SidecarConfig(s.Socket)
	if opts.Metrics {
		addr, err := freeAddress()
		if err != nil {
			return nil, err
		}
		s.Config.MetricsAddress, s.MetricsURL = addr, "http://"+addr+"/metrics"
	}
	if opts.Configure != nil {
		opts.Configure(&s.Config)
	}
	if err := s.Config.Validate(); err != nil {
		return nil, fmt.Errorf("sidecar %s: %w", s.Name, err)
	}
	if opts.Binary != "" {
		s.ConfigFile = filepath.Join(dir, s.Name+".yaml")
	}
	return s, nil
}

// startInProcess assembles the sidecar with server.New and serves it until
// Stop, logging JSON into LogFile at the configured level.
func (s *Sidecar) startInProcess(opts SidecarOptions) error {
	logs, err := openLog(s.LogFile)
	if err != nil {
		return err
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(s.Config.Log.Level))
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))
	var serverOpts []server.Option
	if opts.KubeTransport != nil {
		serverOpts = append(serverOpts, server.WithKubeTransport(opts.KubeTransport))
	}
	sc, err := server.New(s.Config, log, serverOpts...)
	if err != nil {
		logs.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() {
		err := sc.Serve(ctx)
		logs.Close()
		s.done <- err
	}()
	return nil
}

// startProcess writes the configuration file and runs `Binary serve
// --config FILE` until Stop, its output into LogFile.
func (s *Sidecar) startProcess(opts SidecarOptions) error {
	raw, err := config.YAML(s.Config)
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.ConfigFile, raw, 0o600); err != nil {
		return err
	}
	logs, err := openLog(s.LogFile)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(opts.Binary, "serve", "--config", s.ConfigFile)
	s.cmd.Env = append(os.Environ(), opts.Env...)
	s.cmd.Stdout, s.cmd.Stderr = logs, logs
	// Killed with the test process however it ends (go test's -timeout runs
	// no deferred Stop), so no sidecar outlives its test.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logs.Close()
		return fmt.Errorf("starting %s serve: %w", opts.Binary, err)
	}
	s.stop = func() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }
	go func() {
		err := s.cmd.Wait()
		logs.Close()
		s.done <- err
	}()
	return nil
}

// waitListening waits for the socket to appear.
func (s *Sidecar) waitListening(ctx context.Context) error {
	for {
		if _, err := os.Stat(s.Socket); err == nil {
			return nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("exited before listening: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("not listening on %s: %w", s.Socket, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Pid is a process's pid; 0 in process.
func (s *Sidecar) Pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop stops the sidecar as an operator would (SIGTERM, or its context
// cancelled in process) and waits until it has drained; a process that
// has not ended after a minute is killed. It returns how the sidecar
// ended (nil for a clean shutdown); later calls return the same.
func (s *Sidecar) Stop() error {
	return s.end(s.stop)
}

// Kill ends a process with SIGKILL, as the OOM killer or a node failure
// would: no deferred function, no Lease release, nothing. It fails if the
// process ended otherwise, or the sidecar runs in process.
func (s *Sidecar) Kill() error {
	if s.cmd == nil {
		return errors.New("an in-process sidecar cannot be killed")
	}
	_ = s.end(func() { _ = s.cmd.Process.Signal(syscall.SIGKILL) })
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return fmt.Errorf("sidecar %s ended with %v, not by SIGKILL", s.Name, s.exitErr)
	}
	return nil
}

// end runs signal once, waits for the sidecar to end, then closes the
// client connection. Not before: closing it cancels the calls in flight,
// and a sidecar that sees its call cancelled cleans up (deletes a
// credential it just made, releases its Lease), which a kill must not give
// it the chance to do.
func (s *Sidecar) end(signal func()) error {
	s.stopOnce.Do(func() {
		signal()
		select {
		case s.exitErr = <-s.done:
		case <-time.After(time.Minute):
			if s.cmd != nil {
				_ = s.cmd.Process.Kill()
			}
			s.exitErr = fmt.Errorf("sidecar %s did not stop within a minute: %v", s.Name, <-s.done)
		}
		if s.Conn != nil {
			s.Conn.Close()
		}
	})
	return s.exitErr
}

// WaitServing polls the standard health service until DriverService is
// SERVING (the sidecar's watch caches synced), the sidecar ends (a value on
// done, which is put back) or ctx ends.
func WaitServing(ctx context.Context, conn *grpc.ClientConn, done chan error) error {
	hc := healthpb.NewHealthClient(conn)
	for {
		select {
		case err := <-done:
			done <- err
			return fmt.Errorf("sidecar exited: %v", err)
		default:
		}
		callCtx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := hc.Check(callCtx, &healthpb.HealthCheckRequest{Service: pb.DriverService_ServiceDesc.ServiceName})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not SERVING: %w (last: %v %v)", ctx.Err(), resp.GetStatus(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// built is the magnum-capi binary SidecarBinary built in this process.
var built struct {
	sync.Mutex
	path string
}

// SidecarBinary is the magnum-capi binary a sidecar process runs
// (SidecarOptions.Binary): $MAGNUM_CAPI_BIN, which make sets to the binary
// `make build` made, else this tree's ./cmd/magnum-capi built once per test
// process into the stack's directory (for a bare `go test`).
func (h *Harness) SidecarBinary() (string, error) {
	if p := os.Getenv("MAGNUM_CAPI_BIN"); p != "" {
		return p, nil
	}
	built.Lock()
	defer built.Unlock()
	if built.path != "" {
		if _, err := os.Stat(built.path); err == nil {
			return built.path, nil
		}
	}
	path := filepath.Join(h.Info.Dir, "bin", "magnum-capi")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// As make build and deploy/Dockerfile build it.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path, "github.com/magnum-capi/magnum-capi/cmd/magnum-capi")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/magnum-capi (or set MAGNUM_CAPI_BIN): %w\n%s", err, out)
	}
	built.path = path
	return path, nil
}

// openLog opens a sidecar's log for appending: a sidecar started again in
// the same directory (after a stop or a kill) adds to its log.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

// freeAddress is a 127.0.0.1 address nothing listens on right now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
