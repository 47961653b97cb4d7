package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// RepoRoot is the repository's top directory: MAGNUM_CAPI_REPO, else the
// nearest directory at or above the working directory whose go.mod is the
// driver's module (tests run in their package's directory, the test
// binaries make builds from anywhere in the tree), else where this file
// was compiled (a build without -trimpath).
func RepoRoot() string {
	if dir := os.Getenv("MAGNUM_CAPI_REPO"); dir != "" {
		return dir
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if isDriverModule(dir) {
				return dir
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// driverModule is the driver's module path, go.mod's first line.
const driverModule = "module github.com/magnum-capi/magnum-capi\n"

func isDriverModule(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && bytes.HasPrefix(b, []byte(driverModule))
}

// TestdataDir is test/testdata.
func TestdataDir() string { return filepath.Join(RepoRoot(), "test", "testdata") }

// AssetsDir returns a directory holding kube-apiserver, etcd (and kubectl when
// installed): KUBEBUILDER_ASSETS when set, otherwise what test/tools/build.sh
// builds and caches, keyed by version, outside the repository.
func AssetsDir(ctx context.Context) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(RepoRoot(), "test", "tools", "build.sh"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the test bed binaries: %w: %s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// capiModuleDir is the sigs.k8s.io/cluster-api module in the module cache, at
// the version go.mod pins; its CRD YAML ships with it.
func capiModuleDir(ctx context.Context) (string, error) {
	if dir := os.Getenv("MAGNUM_CAPI_CLUSTER_API_DIR"); dir != "" {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api")
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the sigs.k8s.io/cluster-api module (for its CRDs): %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("sigs.k8s.io/cluster-api is not in the module cache; run `go mod download`")
	}
	return dir, nil
}

// capiCRDDirs are the CAPI CRD directories the test bed installs: core,
// kubeadm bootstrap and kubeadm control plane.
func capiCRDDirs(moduleDir string) []string {
	return []string{
		filepath.Join(moduleDir, "core", "config", "crd", "bases"),
		filepath.Join(moduleDir, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(moduleDir, "controlplane", "kubeadm", "config", "crd", "bases"),
	}
}

// providerCRDDirs are the copied CAPO and addon-provider CRDs (see
// test/testdata/crds/PROVENANCE.md).
func providerCRDDirs() []string {
	return []string{
		filepath.Join(TestdataDir(), "crds", "capo-v0.14.7"),
		filepath.Join(TestdataDir(), "crds", "addons.stackhpc.com"),
	}
}
