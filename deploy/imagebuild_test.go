package deploy

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// engine is buildah, and podman reading the same image store: vfs storage
// (no overlay mounts) of the test's own, so parallel tests and other users
// of the machine never share it.
type engine struct{ storage []string }

func newEngine(t *testing.T) engine {
	t.Helper()
	for _, tool := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: make deps (hack/deps.sh) installs Debian's buildah and podman", tool)
		}
	}
	dir := t.TempDir()
	return engine{storage: []string{"--storage-driver", "vfs", "--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "runroot")}}
}

func (e engine) run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	var stderr strings.Builder
	cmd := exec.Command(tool, append(append([]string{}, e.storage...), args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// build builds the image from the root file system tarball with spec's
// configuration, as buildah would from the Dockerfile's final stage, in
// Docker's format (OCI has no HEALTHCHECK).
func (e engine) build(t *testing.T, rootTar string, spec imageSpec, name string) {
	t.Helper()
	ctr := e.run(t, "buildah", "from", "scratch")
	// ADD of a local tarball extracts it with the owners it records.
	e.run(t, "buildah", "add", ctr, rootTar, "/")
	args := []string{"config", "--user", spec.user, "--workingdir", or(spec.workdir, "/"),
		"--entrypoint", jsonOf(spec.entrypoint), "--cmd", jsonOf(spec.cmd)}
	for _, kv := range spec.env {
		args = append(args, "--env", kv)
	}
	for _, v := range spec.volumes {
		args = append(args, "--volume", v)
	}
	for _, p := range spec.expose {
		args = append(args, "--port", p)
	}
	args = append(args, "--healthcheck", "CMD "+strings.Join(spec.health, " "))
	for flag, d := range spec.healthFlags {
		args = append(args, "--healthcheck-"+flag, d.String())
	}
	e.run(t, "buildah", append(args, ctr)...)
	e.run(t, "buildah", "commit", "--quiet", "--format", "docker", ctr, name)
	e.run(t, "buildah", "rm", ctr)
}

// container makes a new working container of image and returns its root
// file system: the image's layer, as an engine would start from it.
func (e engine) container(t *testing.T, image string) string {
	t.Helper()
	ctr := e.run(t, "buildah", "from", "--pull-never", image)
	return e.run(t, "buildah", "mount", ctr)
}

// inspectedConfig is the part of `podman image inspect` the test compares.
type inspectedConfig struct {
	Config struct {
		User         string
		Env          []string
		Entrypoint   []string
		Cmd          []string
		WorkingDir   string
		Volumes      map[string]struct{}
		ExposedPorts map[string]struct{}
	}
	Healthcheck struct {
		Test                           []string
		Interval, Timeout, StartPeriod time.Duration
	}
}

func (e engine) inspect(t *testing.T, image string) inspectedConfig {
	t.Helper()
	var got []inspectedConfig
	if err := json.Unmarshal([]byte(e.run(t, "podman", "image", "inspect", image)), &got); err != nil || len(got) != 1 {
		t.Fatalf("podman image inspect %s: %v (%d images)", image, err, len(got))
	}
	return got[0]
}

func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// rootTar writes the image's root file system as a tarball: what the final
// stage's COPY instructions put there, and a stand-in for its base,
// distroless/static (/etc/passwd and /etc/group with root, nobody and
// nonroot, the CA bundle, /tmp). It returns the tarball and the COPY
// instructions it could not reproduce.
func rootTar(t *testing.T, stages []stage, spec imageSpec, binary string) (string, []string) {
	t.Helper()
	w := newTarWriter(t)
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin", "usr/share", "run", "var", "var/cache", "home", "home/nonroot"} {
		w.dir(d, 0, 0, 0o755)
	}
	w.dir("tmp", 0, 0, 0o1777|fs.ModeSticky)
	w.file("etc/passwd", []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0, 0, 0o644)
	w.file("etc/group", []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"), 0, 0, 0o644)
	if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		w.file("etc/ssl/certs/ca-certificates.crt", ca, 0, 0, 0o644)
	}
	var skipped []string
	for _, c := range spec.copies {
		uid, gid := 0, 0
		if c.chown != "" {
			if _, err := fmt.Sscanf(c.chown, "%d:%d", &uid, &gid); err != nil {
				t.Fatalf("COPY --chown=%s: want numeric uid:gid", c.chown)
			}
		}
		switch {
		case c.from == "build" && len(c.src) == 1 && !strings.HasSuffix(c.src[0], "/") && strings.HasSuffix(c.dst, "/magnum-capi"):
			raw, err := os.ReadFile(binary)
			if err != nil {
				t.Fatal(err)
			}
			w.file(strings.TrimPrefix(c.dst, "/"), raw, uid, gid, 0o755)
		case c.from != "" && len(c.src) == 1 && strings.HasSuffix(c.src[0], "/") && c.from != "shim":
			made := runMkdirs(t, stageNamed(t, stages, c.from))
			w.tree(filepath.Join(made, c.src[0]), strings.Trim(c.dst, "/"), uid, gid)
		default:
			skipped = append(skipped, fmt.Sprintf("COPY --from=%s %s %s", c.from, strings.Join(c.src, " "), c.dst))
		}
	}
	return w.close(), skipped
}

// runMkdirs runs every RUN of s that only makes directories (install -d,
// mkdir) under a temporary root, as the image build runs it, and returns
// that root.
func runMkdirs(t *testing.T, s stage) string {
	t.Helper()
	root := t.TempDir()
	for _, run := range s.instructions("RUN") {
		if !regexp.MustCompile(`^(install -d|mkdir) [^;|]*$`).MatchString(run) {
			continue
		}
		rebased := strings.ReplaceAll(run, " /", " "+root+"/")
		if out, err := exec.Command("/bin/sh", "-ec", rebased).CombinedOutput(); err != nil {
			t.Fatalf("RUN %s (under %s): %v\n%s", run, root, err, out)
		}
	}
	return root
}

type tarWriter struct {
	t    *testing.T
	f    *os.File
	tw   *tar.Writer
	seen map[string]bool
}

func newTarWriter(t *testing.T) *tarWriter {
	f, err := os.Create(filepath.Join(t.TempDir(), "root.tar"))
	if err != nil {
		t.Fatal(err)
	}
	return &tarWriter{t: t, f: f, tw: tar.NewWriter(f), seen: map[string]bool{}}
}

func (w *tarWriter) header(h *tar.Header) {
	if w.seen[h.Name] {
		return
	}
	w.seen[h.Name] = true
	h.ModTime = time.Unix(0, 0)
	if err := w.tw.WriteHeader(h); err != nil {
		w.t.Fatal(err)
	}
}

func (w *tarWriter) dir(name string, uid, gid int, mode fs.FileMode) {
	w.header(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Uid: uid, Gid: gid, Mode: int64(mode.Perm()) | modeBits(mode)})
}

func modeBits(mode fs.FileMode) int64 {
	if mode&fs.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

func (w *tarWriter) file(name string, data []byte, uid, gid int, mode fs.FileMode) {
	w.header(&tar.Header{Typeflag: tar.TypeReg, Name: name, Uid: uid, Gid: gid, Mode: int64(mode.Perm()), Size: int64(len(data))})
	if _, err := w.tw.Write(data); err != nil {
		w.t.Fatal(err)
	}
}

// tree adds the directories under src (not src itself: COPY copies a
// directory's content) below dst, owned by uid:gid, with their modes.
func (w *tarWriter) tree(src, dst string, uid, gid int) {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		if !d.IsDir() {
			return fmt.Errorf("%s: only directories are copied this way", path)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		w.dir(filepath.Join(dst, rel), uid, gid, info.Mode())
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *tarWriter) close() string {
	if err := w.tw.Close(); err != nil {
		w.t.Fatal(err)
	}
	if err := w.f.Close(); err != nil {
		w.t.Fatal(err)
	}
	return w.f.Name()
}

// ownerOf is path's uid, gid and permission bits.
func ownerOf(t *testing.T, path string) (uid, gid int, mode fs.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid), info.Mode().Perm()
}
