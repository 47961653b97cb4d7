// Package debianroot builds and caches the Debian root file systems the
// Magnum lanes run later Magnum releases from (debootstrap), keyed by suite,
// recipe and package versions, outside the repository. It imports little
// on purpose: make test builds its command (test/cmd/debian-roots) first,
// so debootstrap's downloads run beside the first compiles.
package debianroot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// The packages of a release's root file system: Debian's Magnum (its
// magnum-api, magnum-conductor and magnum-db-manage are python3-magnum's),
// magnum-common for /usr/share/magnum-common/api-paste.ini, the shim's
// runtime (grpcio, protobuf), pip to install the shim as the operator guide
// says, and the MySQL driver of Magnum's connection URL. python3-cffi-backend
// is a library python3-grpcio needs that debootstrap's resolver misses
// (without it the second stage leaves grpcio and zmq unconfigured).
var rootPackages = []string{
	"python3-magnum", "magnum-common", "python3-grpcio", "python3-protobuf",
	"python3-pip", "python3-pymysql", "python3-cffi-backend",
}

// Packages whose versions name a cached root: a newer Magnum or Python in
// the suite makes a new root the next time one is built.
var rootKeyPackages = []string{"python3-magnum", "python3", "python3-grpcio", "python3-protobuf"}

// rootRecipe changes whenever the way roots are built changes, so roots of
// an older recipe are not reused.
func rootRecipe() string {
	h := sha256.Sum256([]byte(strings.Join(append([]string{"minbase", "policy-rc.d", "apt-mark", "v2"}, rootPackages...), ",")))
	return fmt.Sprintf("%x", h[:4])
}

// debianMirror is Debian's archive; MAGNUM_CAPI_DEBIAN_MIRROR overrides it.
func debianMirror() string {
	if m := os.Getenv("MAGNUM_CAPI_DEBIAN_MIRROR"); m != "" {
		return m
	}
	return "http://deb.debian.org/debian"
}

// Info describes a built root; it is written as root.json beside it.
type Info struct {
	Suite    string            `json:"suite"`
	Recipe   string            `json:"recipe"`
	Versions map[string]string `json:"versions"`
	Built    time.Time         `json:"built"`
	Seconds  float64           `json:"build_seconds"`
}

// rootsDir is where built roots are cached, outside the repository.
func rootsDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "magnum-capi", "roots"), nil
}

// Ensure returns a cached root file system of the Debian suite,
// building it with debootstrap when none exists (a few minutes, once per
// machine and recipe). The directory is named after the suite, the recipe
// and the key packages' versions; a build happens in a temporary directory
// renamed into place, so concurrent runs never see half a root.
func Ensure(ctx context.Context, suite string, logf func(string, ...any)) (string, Info, error) {
	// One build per suite in this process; other processes race by rename.
	building.Lock()
	mu, ok := buildLocks[suite]
	if !ok {
		mu = &sync.Mutex{}
		buildLocks[suite] = mu
	}
	building.Unlock()
	mu.Lock()
	defer mu.Unlock()
	dir, err := rootsDir()
	if err != nil {
		return "", Info{}, err
	}
	if path, info, ok := findRoot(dir, suite); ok {
		return path, info, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", Info{}, err
	}
	// Across processes too: make test builds the roots in the background
	// (test/cmd/debian-roots) while the lanes may already ask for them; a
	// second debootstrap of the same suite would only slow the first.
	unlock, err := lockSuite(ctx, dir, suite, logf)
	if err != nil {
		return "", Info{}, err
	}
	defer unlock()
	if path, info, ok := findRoot(dir, suite); ok {
		return path, info, nil
	}
	removeAbandonedBuilds(dir)
	logf("building the Debian %s root file system with debootstrap (once per machine; a few minutes)", suite)
	return buildRoot(ctx, dir, suite)
}

// removeAbandonedBuilds removes build directories of runs that were killed
// (a build takes minutes; one older than three hours is nobody's).
func removeAbandonedBuilds(dir string) {
	matches, _ := filepath.Glob(filepath.Join(dir, "build-*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && time.Since(fi.ModTime()) > 3*time.Hour {
			_ = os.RemoveAll(m)
		}
	}
}

var (
	building   sync.Mutex
	buildLocks = map[string]*sync.Mutex{}
)

// findRoot is the newest complete root of the suite and recipe.
func findRoot(dir, suite string) (string, Info, bool) {
	matches, _ := filepath.Glob(filepath.Join(dir, suite+"-"+rootRecipe()+"-*", "root.json"))
	var best string
	var bestInfo Info
	for _, m := range matches {
		var info Info
		b, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(b, &info) != nil {
			continue
		}
		if best == "" || info.Built.After(bestInfo.Built) {
			best, bestInfo = filepath.Join(filepath.Dir(m), "root"), info
		}
	}
	return best, bestInfo, best != ""
}

func buildRoot(ctx context.Context, dir, suite string) (string, Info, error) {
	begin := time.Now()
	build, err := os.MkdirTemp(dir, "build-"+suite+"-")
	if err != nil {
		return "", Info{}, err
	}
	defer os.RemoveAll(build)
	root := filepath.Join(build, "root")
	log := filepath.Join(build, "debootstrap.log")
	out, err := os.Create(log)
	if err != nil {
		return "", Info{}, err
	}
	// In a private mount namespace: debootstrap mounts /proc and /sys in
	// the root, and a killed build must not leave them mounted.
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--",
		"debootstrap", "--variant=minbase", "--include="+strings.Join(rootPackages, ","), suite, root, debianMirror())
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	out.Close()
	if err != nil {
		// debootstrap's resolver misses a library python3-grpcio needs
		// (trixie, sid): the second stage then leaves it unconfigured.
		// apt resolves it.
		if _, statErr := os.Stat(filepath.Join(root, "debootstrap", "debootstrap.log")); statErr != nil {
			return "", Info{}, fmt.Errorf("debootstrap %s (Debian package debootstrap; hack/deps.sh installs it): %w%s", suite, err, TailFile(log, 20))
		}
		if msg, fixErr := completeRoot(ctx, root); fixErr != nil {
			return "", Info{}, fmt.Errorf("debootstrap %s left packages unconfigured and apt-get -f install failed: %w\n%s%s", suite, fixErr, msg,
				TailFile(filepath.Join(root, "debootstrap", "debootstrap.log"), 30))
		}
		_ = os.RemoveAll(filepath.Join(root, "debootstrap"))
	}
	// Nothing installed later may start a service in the root.
	if err := os.WriteFile(filepath.Join(root, "usr", "sbin", "policy-rc.d"), []byte("#!/bin/sh\nexit 101\n"), 0o755); err != nil {
		return "", Info{}, err
	}
	if msg, err := chrootOutput(ctx, root, "dpkg", "--audit"); err != nil || strings.TrimSpace(msg) != "" {
		return "", Info{}, fmt.Errorf("the %s root has unconfigured packages: %v\n%s", suite, err, msg)
	}
	// Every package asked for stays installed whatever apt does later
	// (apt-get -f install marks what it completes as automatic).
	if _, err := chrootOutput(ctx, root, append([]string{"apt-mark", "manual"}, rootPackages...)...); err != nil {
		return "", Info{}, err
	}
	if _, err := chrootOutput(ctx, root, "apt-get", "clean"); err != nil {
		return "", Info{}, err
	}
	info := Info{Suite: suite, Recipe: rootRecipe(), Versions: map[string]string{}, Built: time.Now().UTC()}
	for _, p := range rootKeyPackages {
		v, err := chrootOutput(ctx, root, "dpkg-query", "-W", "-f=${Version}", p)
		if err != nil {
			return "", Info{}, fmt.Errorf("%s in the %s root: %w", p, suite, err)
		}
		info.Versions[p] = strings.TrimSpace(v)
	}
	info.Seconds = time.Since(begin).Seconds()
	b, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(build, "root.json"), b, 0o644); err != nil {
		return "", Info{}, err
	}
	final := filepath.Join(dir, rootName(info))
	if err := os.Rename(build, final); err != nil {
		// Another run built the same root first: use theirs.
		if _, statErr := os.Stat(filepath.Join(final, "root.json")); statErr != nil {
			return "", Info{}, fmt.Errorf("installing the %s root: %w", suite, err)
		}
	}
	return filepath.Join(final, "root"), info, nil
}

// rootName is <suite>-<recipe>-<package>_<version>-..., in a stable order,
// with characters a path cannot carry replaced.
func rootName(info Info) string {
	names := make([]string, 0, len(info.Versions))
	for p := range info.Versions {
		names = append(names, p)
	}
	sort.Strings(names)
	parts := []string{info.Suite, info.Recipe}
	for _, p := range names {
		parts = append(parts, strings.TrimPrefix(p, "python3-")+"_"+strings.NewReplacer(":", "_", "~", "_", "+", "_").Replace(info.Versions[p]))
	}
	return strings.Join(parts, "-")
}

// completeRoot finishes an interrupted second stage with apt-get -f install,
// with /proc mounted privately and the machine's resolver. Debian's archive
// may serve a sid Release file past its Valid-Until (debootstrap does not
// check it; apt would refuse it).
func completeRoot(ctx context.Context, root string) (string, error) {
	resolv, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "resolv.conf"), resolv, 0o644); err != nil {
		return "", err
	}
	script := "mount -t proc proc " + shellQuote(filepath.Join(root, "proc")) + " && exec chroot " + shellQuote(root) +
		" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive" +
		" apt-get -o Acquire::Check-Valid-Until=false -o DPkg::Lock::Timeout=600 -f install -y -q"
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-ec", script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// chrootOutput runs a command in a root without mounting anything (dpkg's
// queries need no /proc).
func chrootOutput(ctx context.Context, root string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("chroot %s %s: %w: %s", root, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// TailFile is the last lines of a file, for an error message.
func TailFile(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return "\n--- " + path + " ---\n" + strings.Join(all, "\n")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
