package magnum

import (
	"context"
	"fmt"
	"io/fs"
	"os"

	"os/exec"
	"path/filepath"
	"strings"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// BuildShim runs the operator guide's build-shim block in dir, on a copy of
// the repository's magnum/ directory (so that concurrent runs never share
// setuptools' build/ directory), and returns dir: the guide's install-shim
// block runs there (dist/magnum_capi-*.whl).
func BuildShim(ctx context.Context, dir string) (string, error) {
	block, err := GuideBlock("build-shim")
	if err != nil {
		return "", err
	}
	src := filepath.Join(testbed.RepoRoot(), "magnum")
	// The distribution's sources only: no build output, caches or tests of
	// an earlier run.
	if err := copyTree(src, filepath.Join(dir, "magnum"), func(name string) bool {
		return name == "build" || name == "__pycache__" || name == ".pytest_cache" || strings.HasSuffix(name, ".egg-info")
	}); err != nil {
		return "", fmt.Errorf("copying magnum/: %w", err)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-ec", block)
	cmd.Dir = dir
	// Debian's Python and pip, as on a Magnum host; nothing of the
	// developer's environment (pyenv, PIP_* settings).
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("the operator guide's build-shim block: %w\n%s", err, out)
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "dist", "magnum_capi-*.whl"))
	if len(wheels) != 1 {
		return "", fmt.Errorf("the build-shim block made %v, want one dist/magnum_capi-*.whl", wheels)
	}
	return dir, nil
}

// InstallShim runs the operator guide's install-shim block in the
// namespace, from dir (BuildShim's), and returns its output.
func InstallShim(ctx context.Context, ns *Namespace, dir string) (string, error) {
	block, err := GuideBlock("install-shim")
	if err != nil {
		return "", err
	}
	out, err := ns.Run(ctx, nil, "/bin/sh", "-ec", "cd "+shellQuote(dir)+"\n"+block)
	if err != nil {
		return out, fmt.Errorf("the operator guide's install-shim block: %w", err)
	}
	if !strings.Contains(out, "magnum_capi") {
		return out, fmt.Errorf("magnum-driver-manage list-drivers does not list magnum_capi:\n%s", out)
	}
	return out, nil
}

// copyTree copies regular files and directories from src to dst, skipping
// names skip says.
func copyTree(src, dst string, skip func(string) bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != src && skip(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
