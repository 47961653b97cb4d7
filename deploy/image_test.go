package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestImage builds the sidecar image on this machine from deploy/Dockerfile's
// final stage (buildah, vfs storage, no registry: the static binary make
// build made, and a root made here in place of distroless/static), checks
// the built image's configuration is the one the final stage declares, and
// runs the image's own binary, from a container made of the image's layer,
// as the image runs it: its entrypoint and command, its user, its
// environment, its volumes as host directories owned as a new named volume
// is, against the test bed.
//
// A container engine is refused here (podman run: "crun: setrlimit
// RLIMIT_NOFILE: Operation not permitted", and with lowered limits "crun:
// cgroups in hybrid mode not supported"), so the test does not show what an
// engine adds: network, PID, IPC and UTS namespaces (the sidecar here shares
// the host's network, so 127.0.0.1 is the host's, which in a container it is
// not), cgroup limits, the engine's capability set and seccomp profile, a
// read-only root (--read-only), the HEALTHCHECK run by the engine, and
// distroless/static's own files (only its /etc/passwd, /etc/group, CA bundle
// and /tmp are reproduced, and not its ENV) — nor the shim's wheel the final
// stage also copies (that stage needs Debian's packages from a registry).
func TestImage(t *testing.T) {
	t.Parallel()
	needRoot(t)
	e := newEngine(t)
	binary := sidecarBinary(t)
	stages := parseDockerfile(t).stages()
	spec := finalStage(t, stages)
	tarball, skipped := rootTar(t, stages, spec, binary)
	for _, s := range skipped {
		t.Logf("not in the image built here: %s", s)
	}
	const image = "localhost/magnum-capi:test"
	e.build(t, tarball, spec, image)
	checkImageConfig(t, spec, e.inspect(t, image))

	b := theBed(t)
	uid, gid := spec.userIDs(t)
	volumes := volumeDirs(t, e.container(t, image), spec.volumes)
	run := func() (jail, *process) {
		root := e.container(t, image)
		if _, err := os.Stat(filepath.Join(root, spec.entrypoint[0])); err != nil {
			t.Fatalf("the container made of the image lacks its entrypoint: %v", err)
		}
		j := jail{root: root, uid: uid, gid: gid, env: spec.env, binds: volumes}
		placeSidecarConfig(t, j, b, spec.cmd)
		return j, j.start(t, append(slices.Clone(spec.entrypoint), spec.cmd...)...)
	}
	socket := filepath.Join(volumes["/run/magnum-capi"], "magnum-capi.sock")
	j, first := run()
	checkServing(t, j, spec, first, socket, uid, gid)
	waitFor(t, 30*time.Second, first.output, func() bool { return strings.Contains(first.output(), `"msg":"chart fetched"`) })
	cached := chartArchive(t, volumes["/var/cache/magnum-capi"])
	before, err := os.Stat(cached)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.stop(t, 30*time.Second); err != nil {
		t.Fatalf("the sidecar exited with %v after SIGTERM:\n%s", err, first.output())
	}
	fetches := b.charts.Requests(b.archivePath())

	// A new container of the image on the same volumes: the chart comes from
	// the cache volume, not from the repository.
	j, second := run()
	checkServing(t, j, spec, second, socket, uid, gid)
	waitFor(t, 30*time.Second, second.output, func() bool { return strings.Contains(second.output(), `"msg":"chart read from the cache"`) })
	if after, err := os.Stat(cached); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the cached chart %s changed across the restart: %v", cached, err)
	}
	if got := b.charts.Requests(b.archivePath()); got != fetches {
		t.Errorf("the restarted sidecar fetched the chart again: %d requests for %s, %d before", got, b.archivePath(), fetches)
	}
}

// checkImageConfig compares the built image's configuration, as podman
// reads it, with the final stage's.
func checkImageConfig(t *testing.T, spec imageSpec, got inspectedConfig) {
	t.Helper()
	c := got.Config
	if c.User != spec.user || or(c.WorkingDir, "/") != or(spec.workdir, "/") {
		t.Errorf("image user %q, workdir %q; the Dockerfile says USER %q, WORKDIR %q", c.User, c.WorkingDir, spec.user, spec.workdir)
	}
	if !slices.Equal(c.Entrypoint, spec.entrypoint) || !slices.Equal(c.Cmd, spec.cmd) {
		t.Errorf("image entrypoint %q cmd %q; the Dockerfile says %q %q", c.Entrypoint, c.Cmd, spec.entrypoint, spec.cmd)
	}
	if !slices.Equal(c.Env, spec.env) {
		t.Errorf("image env %q; the Dockerfile says %q", c.Env, spec.env)
	}
	if vols := sortedKeys(c.Volumes); !slices.Equal(vols, sorted(spec.volumes)) {
		t.Errorf("image volumes %q; the Dockerfile says %q", vols, spec.volumes)
	}
	var ports, exposed []string
	for _, p := range spec.expose {
		ports = append(ports, strings.TrimSuffix(p, "/tcp"))
	}
	for _, p := range sortedKeys(c.ExposedPorts) {
		exposed = append(exposed, strings.TrimSuffix(p, "/tcp"))
	}
	if got := exposed; !slices.Equal(got, sorted(ports)) {
		t.Errorf("image exposes %q; the Dockerfile says %q", got, spec.expose)
	}
	h := got.Healthcheck
	if !slices.Equal(h.Test, append([]string{"CMD"}, spec.health...)) || h.Interval != spec.healthFlags["interval"] || h.Timeout != spec.healthFlags["timeout"] || h.StartPeriod != spec.healthFlags["start-period"] {
		t.Errorf("image healthcheck %+v; the Dockerfile says CMD %q with %v", h, spec.health, spec.healthFlags)
	}
}

// checkServing: the image's health check, with --wait, passes run as the
// image runs it; magnum-conductor's user reaches the socket from the host
// (the volume) and another user does not; the sidecar runs as the image's
// user.
func checkServing(t *testing.T, j jail, spec imageSpec, p *process, socket string, uid, gid int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := j.run(ctx, append(slices.Clone(spec.health), "--wait", "50s")...); err != nil {
		t.Fatalf("the image's health check with --wait: %v\n%s\nsidecar log:\n%s", err, out, p.output())
	}
	if out, err := asUser(ctx, uid, gid, sidecarBinary(t), "health", "--address", "unix://"+socket); err != nil {
		t.Errorf("magnum-conductor's user (uid %d) on the host cannot reach the socket: %v\n%s", uid, err, out)
	}
	if out, err := asUser(ctx, 65534, 65534, sidecarBinary(t), "health", "--address", "unix://"+socket, "--timeout", "2s"); err == nil {
		t.Errorf("another user (nobody) reaches the owner-only socket:\n%s", out)
	}
	if got := p.uids(t); !slices.Equal(got, []int{uid, uid, uid, uid}) {
		t.Errorf("the sidecar runs as uids %v, want %d (the image's USER)", got, uid)
	}
}

// asUser runs a host program as uid:gid (magnum-conductor's side).
func asUser(ctx context.Context, uid, gid int, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// volumeDirs makes a host directory for each volume, owned and with the
// mode of the image's directory (what an engine does filling a new named
// volume), and returns them by the path they are mounted at.
func volumeDirs(t *testing.T, root string, volumes []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	base := reachableDir(t)
	for i, v := range volumes {
		uid, gid, mode := ownerOf(t, filepath.Join(root, v))
		dir := filepath.Join(base, strings.ReplaceAll(strings.Trim(v, "/"), "/", "_")+"-"+string(rune('a'+i)))
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		out[v] = dir
	}
	return out
}

// placeSidecarConfig writes the configuration file the image's command
// names (serve --config FILE), as Kolla's config.json copies it into the
// container, owned by the image's user: the management cluster's
// kubeconfig beside it, the chart cache at its default in the cache volume.
func placeSidecarConfig(t *testing.T, j jail, b *bed, cmd []string) {
	t.Helper()
	i := slices.Index(cmd, "--config")
	if i < 0 || i+1 >= len(cmd) {
		t.Fatalf("CMD %q names no --config file", cmd)
	}
	file := cmd[i+1]
	kubeconfig := filepath.Join(filepath.Dir(file), "kubeconfig")
	placeFile(t, j.root, kubeconfig, b.kubeconfig(t), j.uid, j.gid, 0o600)
	raw, err := config.YAML(b.sidecarConfig(kubeconfig, config.Default().Chart.CacheDir, ""))
	if err != nil {
		t.Fatal(err)
	}
	placeFile(t, j.root, file, raw, j.uid, j.gid, 0o600)
}

// chartArchive is the chart archive cached under the cache directory.
func chartArchive(t *testing.T, cacheDir string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(cacheDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".tgz") && strings.Contains(path, harness.ChartVersion) {
			found = path
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no %s archive cached under %s", harness.ChartVersion, cacheDir)
	}
	return found
}

// sidecarBinary is the binary make build made (MAGNUM_CAPI_BIN), built once
// per test process otherwise.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	h := &harness.Harness{}
	h.Info.Dir = packageDir
	bin, err := h.SidecarBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// reachableDir is a new temporary directory other users can reach (the
// test's temporary directories are root's, mode 0700): where host
// directories shared with magnum-conductor's user go.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDockerRunRecipe: the operator guide's docker-run recipe runs the
// image as its USER, mounts a volume at each of its VOLUMEs and the
// configuration file its CMD names.
func TestDockerRunRecipe(t *testing.T) {
	t.Parallel()
	spec := finalStage(t, parseDockerfile(t).stages())
	words := strings.Fields(strings.ReplaceAll(guideBlock(t, "docker-run"), "\\\n", " "))
	var targets []string
	for i, w := range words {
		switch {
		case w == "--user" && i+1 < len(words) && words[i+1] != spec.user:
			t.Errorf("the recipe runs as %s; the image's USER is %s", words[i+1], spec.user)
		case w == "-v" && i+1 < len(words):
			parts := strings.Split(words[i+1], ":")
			if len(parts) < 2 {
				t.Fatalf("-v %s: want source:target", words[i+1])
			}
			targets = append(targets, parts[1])
		}
	}
	if !slices.Contains(words, "--user") {
		t.Error("the recipe sets no --user")
	}
	for _, v := range spec.volumes {
		if !slices.Contains(targets, v) {
			t.Errorf("the recipe mounts %v, not the image's volume %s", targets, v)
		}
	}
	i := slices.Index(spec.cmd, "--config")
	if i < 0 || i+1 >= len(spec.cmd) || !slices.Contains(targets, filepath.Dir(spec.cmd[i+1])) {
		t.Errorf("the recipe mounts %v, not the directory of the configuration file CMD %q names", targets, spec.cmd)
	}
}
