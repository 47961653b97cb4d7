// Package deploy holds what operators install: the container image, the
// Kolla-Ansible service, the systemd unit, RBAC and example configuration.
// Its tests check those files against the code, without Docker or Ansible.
package deploy

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dockerfile is the parsed subset of deploy/Dockerfile the tests need.
type dockerfile struct {
	args  map[string]string // ARG defaults
	runs  []string          // RUN commands, continuation lines joined
	lines []string          // every instruction, joined
}

func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := dockerfile{args: map[string]string{}}
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		inst := cur.String()
		cur.Reset()
		d.lines = append(d.lines, inst)
		switch word, rest, _ := strings.Cut(inst, " "); word {
		case "ARG":
			name, def, _ := strings.Cut(rest, "=")
			d.args[name] = def
		case "RUN":
			d.runs = append(d.runs, rest)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

// words splits a shell command line: spaces separate, double quotes group.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// TestDockerfileBuild runs the image's build step as written, with the
// output redirected to a temporary directory, and checks what a distroless
// image needs: a static binary (no ELF interpreter, no dynamic section) that
// runs and reports the version given at build time.
func TestDockerfileBuild(t *testing.T) {
	d := parseDockerfile(t)
	var build string
	for _, r := range d.runs {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	if build == "" {
		t.Fatal("deploy/Dockerfile has no RUN ... go build step")
	}
	const version = "v0.0.0-dockerfile-test"
	argRef := regexp.MustCompile(`\$\{(\w+)\}`)
	build = argRef.ReplaceAllStringFunc(build, func(ref string) string {
		name := argRef.FindStringSubmatch(ref)[1]
		if name == "VERSION" {
			return version
		}
		return d.args[name]
	})
	out := filepath.Join(t.TempDir(), "magnum-capi")
	var env []string
	var argv []string
	for _, w := range words(build) {
		if len(argv) == 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(w) {
			env = append(env, w)
			continue
		}
		argv = append(argv, w)
	}
	for i := range argv {
		if argv[i] == "-o" && i+1 < len(argv) {
			argv[i+1] = out
		}
	}
	if !slices.Contains(env, "CGO_ENABLED=0") || !slices.Contains(argv, "-trimpath") {
		t.Fatalf("the build step must be static and reproducible (CGO_ENABLED=0, -trimpath): %s", build)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = ".." // the image's build context is the repository root
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}

	bin, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (program header %v): distroless/static has no libc", p.Type)
		}
	}
	if bin.Section(".dynamic") != nil {
		t.Error("the binary has a .dynamic section")
	}
	got, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", out, err)
	}
	if strings.TrimSpace(string(got)) != version {
		t.Errorf("version = %q, want %q (the ldflags -X main.version)", got, version)
	}
}

// TestDockerfileRuntime checks the final stage: minimal base, non-root user,
// the health check and entry point use the built binary.
func TestDockerfileRuntime(t *testing.T) {
	d := parseDockerfile(t)
	var froms []string
	var user, entry, health string
	for _, l := range d.lines {
		switch word, rest, _ := strings.Cut(l, " "); word {
		case "FROM":
			froms = append(froms, rest)
		case "USER":
			user = rest
		case "ENTRYPOINT":
			entry = rest
		case "HEALTHCHECK":
			health = rest
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[len(froms)-1], "gcr.io/distroless/static") {
		t.Errorf("final stage FROM %v: want a multi-stage build ending on distroless/static", froms)
	}
	if user == "" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root") {
		t.Errorf("USER %q: the image must not run as root", user)
	}
	if !strings.Contains(entry, "/usr/local/bin/magnum-capi") {
		t.Errorf("ENTRYPOINT %s does not run the binary", entry)
	}
	if !strings.Contains(health, `"health"`) || !strings.Contains(health, "unix:///run/magnum-capi/magnum-capi.sock") {
		t.Errorf("HEALTHCHECK %s: want magnum-capi health on the default socket", health)
	}
}
