// Package deploy holds what operators install: the container image, the
// Kolla-Ansible service, the systemd unit, the Helm chart, RBAC and example
// configuration. Its tests check those files against the code, build the
// image with buildah, render Kolla-Ansible's templates with Ansible, and run
// the sidecar as the image, the unit and the chart say against the test
// bed (no container engine or systemd can run on the test machines).
package deploy

import (
	"bufio"
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

// buildStep is the image's `go build` step with its ARGs substituted
// (VERSION as version), split into environment and argv, and its output
// redirected to out.
func buildStep(t *testing.T, d dockerfile, version, out string) (step string, env, argv []string) {
	t.Helper()
	for _, r := range d.runs {
		if strings.Contains(r, "go build") {
			step = r
		}
	}
	if step == "" {
		t.Fatal("deploy/Dockerfile has no RUN ... go build step")
	}
	argRef := regexp.MustCompile(`\$\{(\w+)\}`)
	step = argRef.ReplaceAllStringFunc(step, func(ref string) string {
		name := argRef.FindStringSubmatch(ref)[1]
		if name == "VERSION" {
			return version
		}
		return d.args[name]
	})
	for _, w := range words(step) {
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
	return step, env, argv
}

// TestDockerfileBuild checks the image's build step without a Docker
// engine and without compiling anything again: the step as written, run as
// a dry run (go build -n), must load the whole program with cgo off, so the
// binary links statically with Go's own linker (distroless/static has no
// libc), and stamp the version into main.version (TestVersionStamp checks
// that the stamp reaches `magnum-capi version`).
func TestDockerfileBuild(t *testing.T) {
	const version = "v0.0.0-dockerfile-test"
	step, env, argv := buildStep(t, parseDockerfile(t), version, filepath.Join(t.TempDir(), "magnum-capi"))
	if !slices.Contains(env, "CGO_ENABLED=0") || !slices.Contains(argv, "-trimpath") {
		t.Fatalf("the build step must be static and reproducible (CGO_ENABLED=0, -trimpath): %s", step)
	}
	if len(argv) < 2 || argv[0] != "go" || argv[1] != "build" {
		t.Fatalf("the build step does not run go build: %s", step)
	}
	dry := append([]string{"build", "-n"}, argv[2:]...)
	cmd := exec.Command("go", dry...)
	cmd.Dir = ".." // the image's build context is the repository root
	cmd.Env = append(os.Environ(), env...)
	plan, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s (dry run): %v\n%s", step, err, plan)
	}
	var link string
	for _, line := range strings.Split(string(plan), "\n") {
		if strings.Contains(line, "/link ") && strings.Contains(line, "-buildmode=exe") {
			link = line
		}
	}
	switch {
	case link == "":
		t.Fatalf("the dry run of %s links nothing:\n%s", step, lastLines(string(plan), 20))
	case strings.Contains(link, "-linkmode=external") || strings.Contains(link, "-linkmode external"):
		t.Errorf("the binary would be linked externally (against libc): %s", link)
	case !strings.Contains(link, "-X main.version="+version):
		t.Errorf("the link does not stamp main.version with the image's VERSION: %s", link)
	}
}

// TestVersionStamp: the -X main.version flag the image's build step uses
// reaches `magnum-capi version`, checked on the binary `make build` built
// with it (make test passes MAGNUM_CAPI_BIN and MAGNUM_CAPI_VERSION), so
// nothing is compiled again here.
func TestVersionStamp(t *testing.T) {
	bin, want := os.Getenv("MAGNUM_CAPI_BIN"), os.Getenv("MAGNUM_CAPI_VERSION")
	if bin == "" || want == "" {
		t.Skip("needs the binary make build stamped: make go-test sets MAGNUM_CAPI_BIN and MAGNUM_CAPI_VERSION")
	}
	got, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	if strings.TrimSpace(string(got)) != want {
		t.Errorf("%s version = %q, want %q (-ldflags -X main.version)", bin, got, want)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
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
