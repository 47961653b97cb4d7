package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeconfigFile is a kubeconfig that loads; nothing listens at its server,
// and serve does not need it to before the failures below.
const kubeconfigFile = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

// TestServeStartupErrors: a configuration serve cannot start with exits 2
// (the unit's RestartPreventExitStatus: systemd does not restart it
// forever) and names the option, also when the problem only shows when
// the sidecar is assembled (an unwritable chart cache, a broken kubeconfig).
func TestServeStartupErrors(t *testing.T) {
	tests := []struct {
		name   string
		config func(dir string) string
		want   string
		code   int
	}{
		{"chart cache directory cannot be made", func(dir string) string {
			// Under a regular file: not writable even for root.
			return "chart:\n  cacheDir: " + filepath.Join(dir, "kubeconfig", "charts") + "\n"
		}, "chart.cacheDir", 2},
		{"kubeconfig that does not load", func(dir string) string {
			broken := filepath.Join(dir, "broken")
			if err := os.WriteFile(broken, []byte("apiVersion: v1\nkind: Config\ncurrent-context: none\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return "managementClusters:\n  - name: other\n    kubeconfig: " + broken + "\n"
		}, "managementClusters[0].kubeconfig", 2},
		{"unknown option", func(string) string { return "values:\n  keystone_auth_url: https://k\n" }, "keystone_auth_url", 2},
		{"bad site default", func(string) string { return "values:\n  labelDefaults:\n    boot_volume_size: big\n" }, "values.labelDefaults.boot_volume_size", 2},
		{"log file that cannot be opened", func(dir string) string {
			return "log:\n  file: " + filepath.Join(dir, "kubeconfig", "magnum-capi.log") + "\n"
		}, "log.file", 2},
		{"log file not absolute", func(string) string { return "log:\n  file: magnum-capi.log\n" }, "log.file", 2},
		// Not the configuration's fault: a restart may find it up.
		{"management API down at start", func(string) string { return "" }, "connection refused", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			code, stderr, body := serveWith(t, dir, tt.config(dir))
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %s\n%s", code, stderr, tt.code, tt.want, body)
			}
		})
	}
}

// serveWith runs serve in dir with a configuration that starts as far as
// asking the management API (a kubeconfig that loads, a writable cache),
// whose top-level sections extra replaces, and returns the exit code,
// stderr and the configuration.
func serveWith(t *testing.T, dir, extra string) (int, string, string) {
	t.Helper()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(kubeconfigFile), 0o600); err != nil {
		t.Fatal(err)
	}
	body := mergeTop("listen: unix://"+filepath.Join(dir, "s.sock")+"\nmetricsAddress: \"\"\n"+
		"chart:\n  repository: https://charts.example.com\n  cacheDir: "+filepath.Join(dir, "cache")+"\n"+
		"managementClusters:\n  - name: default\n    kubeconfig: "+kubeconfig+"\n", extra)
	file := filepath.Join(dir, "magnum-capi.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := dispatch(ctx, []string{"serve", "--config", file}, nil, &stdout, &stderr)
	return code, stderr.String(), body
}

// mergeTop replaces base's top-level sections that extra also has.
func mergeTop(base, extra string) string {
	sections := func(s string) (order []string, by map[string]string) {
		by = map[string]string{}
		key := ""
		for _, line := range strings.SplitAfter(s, "\n") {
			if line != "" && line[0] != ' ' {
				key = strings.SplitN(line, ":", 2)[0]
				order = append(order, key)
			}
			by[key] += line
		}
		return order, by
	}
	order, b := sections(base)
	extraOrder, e := sections(extra)
	var out strings.Builder
	for _, k := range order {
		if v, ok := e[k]; ok {
			out.WriteString(v)
		} else {
			out.WriteString(b[k])
		}
	}
	for _, k := range extraOrder {
		if _, ok := b[k]; !ok {
			out.WriteString(e[k])
		}
	}
	return out.String()
}

// TestServeLogFile: with log.file the log is appended to that file (what
// was there stays: logrotate's copytruncate and restarts lose nothing), and
// a start that fails still says so on standard error, naming the file.
func TestServeLogFile(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "magnum-capi.log")
	if err := os.WriteFile(logFile, []byte("{\"msg\":\"earlier\"}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	// An unwritable chart cache: a start failure after the logger exists.
	code, stderr, _ := serveWith(t, dir, "log:\n  file: "+logFile+"\n"+
		"chart:\n  repository: https://charts.example.com\n  cacheDir: "+filepath.Join(dir, "kubeconfig", "charts")+"\n")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (unwritable chart.cacheDir); stderr %q", code, stderr)
	}
	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(logged)), "\n")
	if len(lines) < 2 || lines[0] != `{"msg":"earlier"}` || !strings.Contains(string(logged), "chart.cacheDir") {
		t.Errorf("log file %s: want the earlier line kept and the start failure (naming chart.cacheDir) appended as JSON:\n%s", logFile, logged)
	}
	if !strings.Contains(stderr, logFile) || !strings.Contains(stderr, "chart.cacheDir") {
		t.Errorf("stderr %q: want the failure named there too, with the log file", stderr)
	}
}
