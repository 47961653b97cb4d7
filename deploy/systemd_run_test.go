package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/server/config"
)

// unitFile is a systemd unit's settings: every value of each key, by
// section.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			key, val, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: %q is not a key=value in a section", path, line)
			}
			u[section][key] = append(u[section][key], val)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one is key's single value in [Service].
func (u unitFile) one(t *testing.T, key string) string {
	t.Helper()
	v := u["Service"][key]
	if len(v) != 1 {
		t.Fatalf("the unit has %d %s= settings, want 1", len(v), key)
	}
	return v[0]
}

// reproduced are the [Service] settings TestSystemdUnitRuns applies; every
// other one is named as what only systemd shows.
var reproduced = []string{"Type", "User", "Group", "EnvironmentFile", "ExecStart", "ExecStartPost", "RuntimeDirectory",
	"RuntimeDirectoryMode", "CacheDirectory", "CacheDirectoryMode", "KillSignal", "UMask", "NoNewPrivileges",
	"CapabilityBoundingSet", "AmbientCapabilities", "Restart", "RestartPreventExitStatus"}

// TestSystemdUnitRuns runs the unit's ExecStart and ExecStartPost exactly as
// the unit says, with its user and group, its runtime and cache directories
// (made as systemd makes them), its environment, UMask and NoNewPrivileges,
// in a root laid out by the operator guide's install-systemd block, against
// the test bed: the health wait passes, the socket is magnum-conductor's
// user's alone, the logs are JSON, a kill is an unclean exit (which
// Restart=on-failure restarts) after which the sidecar starts again, and a
// configuration error exits with RestartPreventExitStatus.
//
// systemd cannot run here (systemd-nspawn: "Failed to open system bus"; PID
// 1 is not systemd), so the test does not show the unit's sandboxing (it
// logs those settings), journald (the logs are read from standard error),
// the restart itself, ordering against magnum-conductor, or the timeouts.
func TestSystemdUnitRuns(t *testing.T) {
	t.Parallel()
	needRoot(t)
	u := parseUnit(t, "systemd/magnum-capi.service")
	if got := u.one(t, "Restart"); got != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", got)
	}
	var notShown []string
	for key, vals := range u["Service"] {
		if !slices.Contains(reproduced, key) {
			notShown = append(notShown, key+"="+strings.Join(vals, " "))
		}
	}
	slices.Sort(notShown)
	t.Logf("only systemd applies: %s", strings.Join(notShown, "; "))

	j, dirs := unitJail(t, u)
	b := theBed(t)
	placeFile(t, j.root, "/etc/magnum-capi/magnum-capi.yaml", sidecarYAML(t, b.sidecarConfig("/etc/magnum-capi/kubeconfig", filepath.Join(dirs["CacheDirectory"], "charts"), "")), 0, j.gid, 0o640)
	start := strings.Fields(u.one(t, "ExecStart"))
	post := strings.Fields(strings.TrimPrefix(u.one(t, "ExecStartPost"), "-"))
	socket := filepath.Join(j.root, dirs["RuntimeDirectory"], "magnum-capi.sock")

	p := j.start(t, start...)
	checkUnitServing(t, j, p, post, socket)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := p.wait(); !errors.As(err, &exit) || !exit.Sys().(syscall.WaitStatus).Signaled() {
		t.Errorf("killed, the sidecar ended with %v: want death by signal, a failure Restart=on-failure restarts", err)
	}
	// What systemd does before the restart: the runtime directory is
	// removed with the stopped service and made again.
	makeUnitDir(t, j, dirs["RuntimeDirectory"], u.one(t, "RuntimeDirectoryMode"), true)
	p = j.start(t, start...)
	checkUnitServing(t, j, p, post, socket)
	if err := p.stop(t, 75*time.Second); err != nil {
		t.Errorf("stopped with %s, the sidecar exited with %v: want 0 (no restart)\n%s", u.one(t, "KillSignal"), err, p.output())
	}

	// A configuration error (here from the EnvironmentFile) exits with the
	// status the unit does not restart on.
	env := strings.TrimPrefix(u.one(t, "EnvironmentFile"), "-")
	placeFile(t, j.root, env, []byte("MAGNUM_CAPI_LOG_LEVEL=loud\n"), 0, 0, 0o600)
	j.env = append(j.env, "MAGNUM_CAPI_LOG_LEVEL=loud")
	out, err := j.run(context.Background(), start...)
	if !errors.As(err, &exit) || strconv.Itoa(exit.ExitCode()) != u.one(t, "RestartPreventExitStatus") || !strings.Contains(out, "log.level") {
		t.Errorf("with a bad option the sidecar ended with %v, want exit status RestartPreventExitStatus=%s naming the option:\n%s", err, u.one(t, "RestartPreventExitStatus"), out)
	}
}

// unitJail lays out a host's root by the operator guide's install-systemd
// block and makes the unit's runtime and cache directories as systemd does
// (owned by User:Group, with their modes). It returns the jail the unit's
// commands run in and the directories by setting.
func unitJail(t *testing.T, u unitFile) (jail, map[string]string) {
	t.Helper()
	acct, err := user.Lookup(u.one(t, "User"))
	if err != nil {
		t.Skipf("the unit's user %s: %v (Debian's magnum-common, which make deps installs, creates it)", u.one(t, "User"), err)
	}
	grp, err := user.LookupGroup(u.one(t, "Group"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(acct.Uid)
	gid, _ := strconv.Atoi(grp.Gid)
	root := reachableDir(t)
	runGuideInstall(t, root)
	umask, err := strconv.ParseUint(u.one(t, "UMask"), 8, 32)
	if err != nil {
		t.Fatal(err)
	}
	j := jail{root: root, uid: uid, gid: gid, umask: os.FileMode(umask), noNewPrivs: u.one(t, "NoNewPrivileges") == "yes",
		// systemd's environment for a service with User=: its own PATH, the
		// user's HOME, USER, LOGNAME and SHELL, and the directories' paths.
		env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "HOME=" + acct.HomeDir, "USER=" + acct.Username, "LOGNAME=" + acct.Username, "SHELL=/bin/false"}}
	dirs := map[string]string{}
	for _, kind := range []struct{ setting, base, envName string }{{"RuntimeDirectory", "/run", "RUNTIME_DIRECTORY"}, {"CacheDirectory", "/var/cache", "CACHE_DIRECTORY"}} {
		dir := filepath.Join(kind.base, u.one(t, kind.setting))
		makeUnitDir(t, j, dir, u.one(t, kind.setting+"Mode"), false)
		dirs[kind.setting] = dir
		j.env = append(j.env, kind.envName+"="+dir)
	}
	return j, dirs
}

// makeUnitDir makes dir under the jail's root owned by its user with mode
// (octal), emptied first when fresh.
func makeUnitDir(t *testing.T, j jail, dir, mode string, fresh bool) {
	t.Helper()
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil {
		t.Fatalf("%s: %v", mode, err)
	}
	full := filepath.Join(j.root, dir)
	if fresh {
		if err := os.RemoveAll(full); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(full, os.FileMode(m)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(full, j.uid, j.gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, os.FileMode(m)); err != nil {
		t.Fatal(err)
	}
}

// runGuideInstall runs the install commands of the operator guide's
// install-systemd block with every absolute path under root, in a
// directory holding what they install (the binary, the repository's
// deploy/, a kubeconfig and a clouds.yaml); the systemctl and health lines
// are what the test does itself.
func runGuideInstall(t *testing.T, root string) {
	t.Helper()
	work := t.TempDir()
	bin, err := os.ReadFile(sidecarBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"magnum-capi": bin, "kubeconfig": theBed(t).kubeconfig(t), "clouds.yaml": []byte("clouds: {}\n")} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(mustAbs(t, "."), filepath.Join(work, "deploy")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"usr/local/bin", "etc/systemd/system", "run", "var/cache", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var ran int
	for _, line := range strings.Split(guideBlock(t, "install-systemd"), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		if !strings.HasPrefix(cmd, "install ") {
			if f := strings.Fields(cmd); len(f) > 0 && f[0] != "systemctl" && f[0] != "magnum-capi" {
				t.Fatalf("install-systemd block: %q is neither an install, systemctl nor magnum-capi command", line)
			}
			continue
		}
		sh := exec.Command("/bin/sh", "-ec", strings.ReplaceAll(cmd, " /", " "+root+"/"))
		sh.Dir = work
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("install-systemd block: %s: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("the install-systemd block installs nothing")
	}
}

// checkUnitServing: ExecStartPost passes; the socket is the unit user's,
// 0600 (magnum-conductor runs as that user and reaches it from the host);
// the sidecar runs as that user without capabilities and with
// no_new_privs; every line it logged is a JSON object.
func checkUnitServing(t *testing.T, j jail, p *process, post []string, socket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := j.run(ctx, post...); err != nil {
		t.Fatalf("ExecStartPost %q: %v\n%s\nsidecar log:\n%s", post, err, out, p.output())
	}
	if uid, gid, mode := ownerOf(t, socket); uid != j.uid || gid != j.gid || mode != 0o600 {
		t.Errorf("socket %s: owner %d:%d mode %v, want %d:%d 0600", socket, uid, gid, mode, j.uid, j.gid)
	}
	if out, err := asUser(ctx, j.uid, j.gid, sidecarBinary(t), "health", "--address", "unix://"+socket); err != nil {
		t.Errorf("magnum-conductor's user cannot reach the socket from the host: %v\n%s", err, out)
	}
	if got := p.uids(t); !slices.Equal(got, []int{j.uid, j.uid, j.uid, j.uid}) {
		t.Errorf("the sidecar runs as uids %v, want %d", got, j.uid)
	}
	if got := procIDs(t, p.cmd.Process.Pid, "NoNewPrivs:"); !slices.Equal(got, []int{1}) {
		t.Errorf("NoNewPrivs: %v, want 1", got)
	}
	if caps := procField(t, p.cmd.Process.Pid, "CapEff:"); strings.Trim(caps, "0") != "" {
		t.Errorf("the sidecar has capabilities %s, want none (CapabilityBoundingSet=)", caps)
	}
	for _, line := range strings.Split(strings.TrimSpace(p.output()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["level"] == nil || entry["msg"] == nil {
			t.Errorf("a log line is not a JSON entry with level and msg: %q", line)
		}
	}
}

// procField is field's value in /proc/<pid>/status.
func procField(t *testing.T, pid int, field string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return ""
}

// sidecarYAML is c as the sidecar's configuration file.
func sidecarYAML(t *testing.T, c config.Config) []byte {
	t.Helper()
	raw, err := config.YAML(c)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
