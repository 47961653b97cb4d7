package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unreachableKubeconfig is a kubeconfig whose API server refuses
// connections, with contexts "a" (current) and "b".
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: someone
  user: {token: not-a-real-token}
contexts:
- name: a
  context: {cluster: nowhere, user: someone}
- name: b
  context: {cluster: nowhere, user: someone}
current-context: a
`

// TestStatusLiveConnection: live mode's kubeconfig handling; reading
// failures exit 1 (not the caller's input) and say what failed, never the
// token. Reading a real management cluster is tested end to end against the
// sidecar (test/e2e TestStatusLiveMatchesSidecar).
func TestStatusLiveConnection(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(unreachableKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	live := []string{"--cluster", "c1-aaaaaaaaaaaa", "--namespace", "magnum-p", "--magnum-status", "CREATE_IN_PROGRESS"}
	for _, c := range []struct {
		name    string
		args    []string
		env     string // $KUBECONFIG
		code    int
		stderr  string
		without string
	}{
		{"kubeconfig missing", []string{"--kubeconfig", filepath.Join(dir, "nope")}, "", 1, `--kubeconfig "` + filepath.Join(dir, "nope") + `"`, ""},
		{"unknown context", []string{"--kubeconfig", kubeconfig, "--context", "c"}, "", 1, `--context "c"`, ""},
		{"unreachable API server", []string{"--kubeconfig", kubeconfig}, "", 1, "reading cluster c1-aaaaaaaaaaaa in namespace magnum-p: listing Cluster in magnum-p", "not-a-real-token"},
		{"another context", []string{"--kubeconfig", kubeconfig, "--context", "b"}, "", 1, "127.0.0.1:1", "not-a-real-token"},
		{"$KUBECONFIG by default", nil, kubeconfig, 1, "127.0.0.1:1", ""},
		{"--stack-id must be --cluster", []string{"--kubeconfig", kubeconfig, "--stack-id", "other-aaaaaaaaaaaa"}, "", 2, "--cluster is the stack_id", ""},
		{"--kubeconfig without --cluster", []string{"--kubeconfig", kubeconfig, "--magnum-status", "CREATE_IN_PROGRESS"}, "", 2, "live mode needs both --cluster and --namespace", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", c.env)
			args := append(append([]string{}, live...), c.args...)
			if strings.HasPrefix(c.name, "--kubeconfig without") {
				args = c.args
			}
			code, stdout, stderr := runStatusArgs(args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and stderr containing %q", code, stderr, c.code, c.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout on failure: %s", stdout)
			}
			if c.without != "" && strings.Contains(stderr, c.without) {
				t.Errorf("stderr shows %q: %s", c.without, stderr)
			}
		})
	}
}
