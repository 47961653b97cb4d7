package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The peer: the StackHPC driver (magnum-capi-helm 1.4.0) runs one helm CLI
// process per mutation, `helm upgrade --install` with history 10, a 5 m
// timeout, the chart from its repository (--repo: the index and the chart
// are fetched by every process) and the whole values document on stdin
// (shared/research/capi-helm-driver.md §1.15). The benchmarks run that
// command with a helm CLI built from the Helm module this project uses
// (go.mod's tool line), so both sides run the same Helm code.

var (
	peerOnce sync.Once
	peerBin  string
	peerErr  error
)

// peerHelm builds the helm CLI once per benchmark process.
func peerHelm(b *testing.B) string {
	b.Helper()
	peerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-peer-helm-")
		if err != nil {
			peerErr = err
			return
		}
		peerBin = filepath.Join(dir, "helm")
		out, err := exec.Command("go", "build", "-o", peerBin, "helm.sh/helm/v3/cmd/helm").CombinedOutput()
		if err != nil {
			peerErr = fmt.Errorf("building the peer's helm CLI: %v\n%s", err, out)
		}
	})
	if peerErr != nil {
		b.Fatal(peerErr)
	}
	return peerBin
}

// removePeer removes the helm CLI built for the benchmarks and the
// processes' home (their repository caches).
func removePeer() {
	if peerBin != "" {
		_ = os.RemoveAll(filepath.Dir(peerBin))
	}
	_ = os.RemoveAll(peerHome())
}

// peerHome is the helm processes' HOME.
func peerHome() string { return filepath.Join(os.TempDir(), "bench-peer-home") }

// peerRun is one helm process: its wall time and peak resident memory.
type peerRun struct {
	took   time.Duration
	maxRSS float64 // MiB
}

// peerDeploy runs the peer's `helm upgrade --install` of release name in
// ns with values.
func peerDeploy(ctx context.Context, b *testing.B, w *world, name, ns string, values map[string]any) (peerRun, error) {
	doc, err := yaml.Marshal(values)
	if err != nil {
		return peerRun{}, err
	}
	info := w.stack.Info
	return runPeer(ctx, peerHelm(b), doc, "upgrade", name, info.ChartName, "--history-max", "10", "--install", "--output", "json",
		"--timeout", "5m", "--values", "-", "--namespace", ns, "--repo", info.ChartRepository, "--version", info.ChartVersion,
		"--kubeconfig", info.Kubeconfig)
}

// peerUninstall removes a peer release as the peer does.
func peerUninstall(ctx context.Context, b *testing.B, w *world, name, ns string) error {
	_, err := runPeer(ctx, peerHelm(b), nil, "uninstall", name, "--timeout", "5m", "--namespace", ns, "--kubeconfig", w.stack.Info.Kubeconfig)
	return err
}

func runPeer(ctx context.Context, bin string, stdin []byte, args ...string) (peerRun, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	// The CLI's caches and config in a directory of its own, as for a
	// conductor's user: the index is fetched by each process all the same.
	home := peerHome()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+home+"/cache", "XDG_CONFIG_HOME="+home+"/config", "XDG_DATA_HOME="+home+"/data")
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	run := peerRun{took: time.Since(start)}
	if cmd.ProcessState == nil {
		return run, fmt.Errorf("helm %s did not start: %w", args[0], err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.maxRSS = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	if err != nil {
		return run, fmt.Errorf("helm %s: %v\n%s", strings.Join(args[:2], " "), err, tail(out.String(), 2000))
	}
	return run, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// renamedValues is values with the release name from replaced by to
// everywhere (Secret names, cluster names), as renamedObjects does for a
// manifest.
func renamedValues(values map[string]any, from, to string) (map[string]any, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), from, to)), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// withMachineCount is a copy of values with node group group's
// machineCount set to n.
func withMachineCount(values map[string]any, group string, n int) (map[string]any, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	groups, _ := out["nodeGroups"].([]any)
	for _, g := range groups {
		if m, ok := g.(map[string]any); ok && m["name"] == group {
			m["machineCount"] = n
			return out, nil
		}
	}
	return nil, fmt.Errorf("values have no node group %q in nodeGroups", group)
}

// applyParallel is the floor: every object server-side applied at once,
// by a client without rate limits.
func applyParallel(ctx context.Context, kc client.Client, objs []*unstructured.Unstructured) error {
	errs := make(chan error, len(objs))
	var wg sync.WaitGroup
	for _, o := range objs {
		wg.Go(func() {
			if err := kc.Patch(ctx, o.DeepCopy(), client.Apply, client.FieldOwner("bench-floor"), client.ForceOwnership); err != nil {
				errs <- fmt.Errorf("server-side apply of %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
