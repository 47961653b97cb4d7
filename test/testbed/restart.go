package testbed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// StopAPIServer stops kube-apiserver gracefully and leaves etcd, the
// conversion webhook and the certificates in place. Every request fails
// (connection refused) until StartAPIServer. A graceful stop waits for
// in-flight requests (up to a minute with clients attached); KillAPIServer
// is the crash.
func (e *Env) StopAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	return nil
}

// KillAPIServer SIGKILLs kube-apiserver, as a crash or an OOM kill would:
// open connections and watches break at once, in-flight requests get no
// answer. StartAPIServer brings it back.
func (e *Env) KillAPIServer() error {
	certDir := e.env.ControlPlane.GetAPIServer().CertDir
	pid, err := processWithArg("--cert-dir=" + certDir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
	}
	// envtest's own record of the process must see it exited before it
	// can start another: wait until it is reaped, then let Stop tidy up.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver (pid %d) still there 30s after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var stopErr error
	for range 50 {
		if stopErr = e.env.ControlPlane.GetAPIServer().Stop(); stopErr == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("after killing kube-apiserver: %w", stopErr)
}

// processWithArg finds the one process whose command line has arg: this
// test bed's kube-apiserver is the only one with its certificate directory.
func processWithArg(arg string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			if string(a) == arg {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process with %s", arg)
}

// StartAPIServer starts kube-apiserver again after StopAPIServer or
// KillAPIServer, on the same port, etcd and certificates (Start gave it a
// directory of its own), and returns once it answers /healthz. Everything
// stored survives; existing clients reconnect on their own.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}
