package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
)

// More sidecars on the shared stack, beside the package's own: in process
// (server.Run, as the package's) with an edited configuration, or as a
// magnum-capi serve process that a test can kill.

// peer is another sidecar replica on the shared stack.
type peer struct {
	name   string
	driver pb.DriverServiceClient
	log    string
}

// peerConfig is the stack's sidecar configuration for a sidecar named
// name, listening on its own socket, as a file and loaded.
func peerConfig(t *testing.T, name string) (string, string) {
	t.Helper()
	socket := filepath.Join(stack.Info.Dir, name+".sock")
	file := filepath.Join(stack.Info.Dir, name+".yaml")
	if err := os.WriteFile(file, []byte(stack.SidecarConfig(socket)), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, socket
}

// startPeer runs another sidecar in this process with the stack's
// configuration as edit changes it; it stops when the test ends.
func startPeer(t *testing.T, name string, edit func(*config.Config)) *peer {
	t.Helper()
	file, socket := peerConfig(t, name)
	cfg, err := config.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(stack.Info.Dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar %s: %v", name, err)
		}
		logFile.Close()
		if t.Failed() {
			t.Logf("sidecar %s log: %s", name, logPath)
		}
	})
	if err := waitServing(conn, done); err != nil {
		t.Fatalf("sidecar %s: %v", name, err)
	}
	return &peer{name: name, driver: pb.NewDriverServiceClient(conn), log: logPath}
}

// peerProcess is a magnum-capi serve process.
type peerProcess struct {
	*peer
	cmd    *exec.Cmd
	exited chan error
}

// startPeerProcess runs bin/magnum-capi serve with a configuration file's text
// and MAGNUM_CAPI_* overrides in env.
func startPeerProcess(t *testing.T, name, configText string, env ...string) *peerProcess {
	t.Helper()
	bin := sidecarBinary(t)
	socket := filepath.Join(stack.Info.Dir, name+".sock")
	file := filepath.Join(stack.Info.Dir, name+".yaml")
	if err := os.WriteFile(file, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(stack.Info.Dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	cmd.Env = append(append(os.Environ(), "MAGNUM_CAPI_LISTEN=unix://"+socket), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &peerProcess{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait(); logFile.Close() }()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-p.exited
		}
		if t.Failed() {
			t.Logf("sidecar process %s log: %s", name, logPath)
		}
	})
	if err := waitServing(conn, p.exited); err != nil {
		t.Fatalf("sidecar process %s: %v (log %s)", name, err, logPath)
	}
	p.peer = &peer{name: name, driver: pb.NewDriverServiceClient(conn), log: logPath}
	return p
}

// kill ends the process with SIGKILL, as the OOM killer or a node failure
// would: no deferred function, no lease release, nothing.
func (p *peerProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-p.exited
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("sidecar process %s ended with %v, not by SIGKILL", p.name, err)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// sidecarBinary is MAGNUM_CAPI_BIN, or this tree's magnum-capi built once
// into the stack's directory.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binPath = os.Getenv("MAGNUM_CAPI_BIN"); binPath != "" {
			return
		}
		binPath = filepath.Join(stack.Info.Dir, "bin", "magnum-capi-sidecar")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/magnum-capi/magnum-capi/cmd/magnum-capi").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./cmd/magnum-capi: %w\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// withKubeconfig is the stack's sidecar configuration text with the first
// management cluster reached through another kubeconfig.
func withKubeconfig(t *testing.T, socket, kubeconfig string) string {
	t.Helper()
	text := stack.SidecarConfig(socket)
	old := "kubeconfig: " + stack.Info.Kubeconfig + "\n"
	if !strings.Contains(text, old) {
		t.Fatalf("the sidecar configuration does not name %s", stack.Info.Kubeconfig)
	}
	return strings.Replace(text, old, "kubeconfig: "+kubeconfig+"\n", 1)
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
