package magnum

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/ports"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// Sidecar is `magnum-capi serve` as deploy/systemd runs it: the unit's
// ExecStart command line, the binary at /usr/local/bin, its configuration at
// /etc/magnum-capi derived from deploy/config/magnum-capi.yaml, its socket
// in /run/magnum-capi (the unit's RuntimeDirectory) and its chart cache in
// /var/cache/magnum-capi (CacheDirectory). It runs in a private mount
// namespace of this machine's files, so those paths are its own. Two things
// differ from the unit, for the test: it runs as root (one sidecar serves
// Magnum releases from three root file systems whose magnum users have
// different uids), and without systemd's sandboxing.
type Sidecar struct {
	// RunDir is the directory mounted at /run/magnum-capi in the sidecar's
	// namespace and every Magnum release's: the socket is shared through it.
	RunDir string
	// Log is the sidecar's standard error (journald's part).
	Log string
	// MetricsAddress serves /metrics and /healthz.
	MetricsAddress string

	ns   *Namespace
	argv []string
	proc *process
}

// sidecarSite are the values a site changes in deploy/config's example.
func sidecarSite(info harness.Info, metrics string) map[string]any {
	return map[string]any{
		"metricsAddress": metrics,
		"chart":          map[string]any{"repository": info.ChartRepository, "version": info.ChartVersion},
		"openstack":      map[string]any{"authURL": info.AuthURL, "cloud": info.ServiceCloud},
		// Tests only: every call logged, to read a failure.
		"log": map[string]any{"level": "debug"},
	}
}

// SidecarConfig is deploy/config/magnum-capi.yaml with the site's values.
func SidecarConfig(site map[string]any) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(testbed.RepoRoot(), "deploy", "config", "magnum-capi.yaml"))
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("deploy/config/magnum-capi.yaml: %w", err)
	}
	if err := overlay(cfg, site, ""); err != nil {
		return nil, err
	}
	return yaml.Marshal(cfg)
}

// overlay sets site's values into cfg; an option the example does not have
// is an error (the test may only change what the example shows).
func overlay(cfg, site map[string]any, path string) error {
	for k, v := range site {
		cur, ok := cfg[k]
		if !ok {
			return fmt.Errorf("deploy/config/magnum-capi.yaml has no option %s%s", path, k)
		}
		sub, isMap := v.(map[string]any)
		if curMap, curIsMap := cur.(map[string]any); isMap && curIsMap {
			if err := overlay(curMap, sub, path+k+"."); err != nil {
				return err
			}
			continue
		}
		cfg[k] = v
	}
	return nil
}

// ExecStart is the unit's command line in deploy/systemd/magnum-capi.service.
func ExecStart() ([]string, error) {
	f, err := os.Open(filepath.Join(testbed.RepoRoot(), "deploy", "systemd", "magnum-capi.service"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			return strings.Fields(line), nil
		}
	}
	return nil, fmt.Errorf("deploy/systemd/magnum-capi.service has no ExecStart")
}

// hostMounts are the mounts that give a process on this machine its own
// /etc, /var, /usr/local and /run (overlays over the machine's, written to
// dir), with the sidecar's socket directory at /run/magnum-capi.
func hostMounts(dir, sidecarRun string) []Mount {
	var mounts []Mount
	for _, m := range []struct{ target, name string }{{"/etc", "etc"}, {"/var", "var"}, {"/usr/local", "usrlocal"}} {
		mounts = append(mounts, Mount{Target: m.target, Upper: filepath.Join(dir, m.name), Work: filepath.Join(dir, "work", m.name)})
	}
	return append(mounts, Mount{Target: "/run", Tmpfs: true}, Mount{Target: "/run/magnum-capi", Source: sidecarRun})
}

// StartSidecar installs the binary and configuration as the operator guide
// says and starts the unit's command line; it returns once the sidecar is
// SERVING (`magnum-capi health`, as the unit's ExecStartPost suggests).
func StartSidecar(ctx context.Context, dir, binary string, info harness.Info) (*Sidecar, error) {
	s := &Sidecar{RunDir: filepath.Join(dir, "run"), Log: filepath.Join(dir, "magnum-capi.log")}
	if err := os.MkdirAll(s.RunDir, 0o755); err != nil {
		return nil, err
	}
	port, err := ports.Free()
	if err != nil {
		return nil, err
	}
	s.MetricsAddress = "127.0.0.1:" + strconv.Itoa(port)
	config, err := SidecarConfig(sidecarSite(info, s.MetricsAddress))
	if err != nil {
		return nil, err
	}
	if s.argv, err = ExecStart(); err != nil {
		return nil, err
	}
	if s.ns, err = StartNamespace(ctx, "/", "/", hostMounts(dir, s.RunDir)); err != nil {
		return nil, err
	}
	files := map[string]struct {
		from string
		data []byte
		mode os.FileMode
	}{
		"/usr/local/bin/magnum-capi":          {from: binary, mode: 0o755},
		"/etc/magnum-capi/magnum-capi.yaml":   {data: config, mode: 0o640},
		"/etc/magnum-capi/kubeconfig":         {from: info.Kubeconfig, mode: 0o640},
		"/etc/magnum-capi/clouds.yaml":        {from: info.ServiceCloudsFile, mode: 0o640},
		"/var/cache/magnum-capi/charts/.keep": {mode: 0o640}, // CacheDirectory=
	}
	for path, f := range files {
		data := f.data
		if f.from != "" {
			if data, err = os.ReadFile(f.from); err != nil {
				s.Stop()
				return nil, err
			}
		}
		if err := s.ns.WriteFile(ctx, path, data, f.mode); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if err := s.Start(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Start runs the unit's command line and waits until the sidecar serves.
func (s *Sidecar) Start(ctx context.Context) error {
	var err error
	if s.proc, err = startProcess("magnum-capi serve", s.ns.Command(context.WithoutCancel(ctx), nil, s.argv...), s.Log); err != nil {
		return err
	}
	return s.proc.waitFor(ctx, "the sidecar to be SERVING", 2*time.Minute, func() bool {
		_, err := s.ns.Run(ctx, nil, "/usr/local/bin/magnum-capi", "health")
		return err == nil
	})
}

// Halt stops the sidecar (SIGTERM: it drains calls in flight, as systemctl
// stop does), leaving its namespace for Start.
func (s *Sidecar) Halt() {
	s.proc.stop(syscall.SIGTERM, 75*time.Second) // the unit's TimeoutStopSec
}

// Stop stops the sidecar and ends its namespace.
func (s *Sidecar) Stop() {
	s.Halt()
	if s.ns != nil {
		s.ns.Close()
	}
}

// NonJSONLines are the lines of the sidecar's log that are not one JSON
// object each (the log is JSON lines for journald and log shippers).
func (s *Sidecar) NonJSONLines() ([]string, error) {
	f, err := os.Open(s.Log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var bad []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var obj map[string]any
		if json.Unmarshal(sc.Bytes(), &obj) != nil {
			bad = append(bad, sc.Text())
		}
	}
	return bad, sc.Err()
}
