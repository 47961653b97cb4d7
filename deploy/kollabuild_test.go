package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const kollaBuildOverride = "kolla-ansible/kolla-build/template-overrides.j2"

// guideBlock is the body of docs/operator-guide.md's code block marked
// <!-- test: name -->.
func guideBlock(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/operator-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "<!-- test: "+name+" -->\n")
	if !ok {
		t.Fatalf("docs/operator-guide.md has no block marked %s", name)
	}
	m := regexp.MustCompile("(?s)^```[a-z]*\n(.*?)```").FindStringSubmatch(after)
	if m == nil {
		t.Fatalf("docs/operator-guide.md: no code block right after the %s marker", name)
	}
	return strings.TrimSpace(m[1])
}

// TestDockerfileCarriesTheShim: the image's shim stage builds the wheel
// exactly as the operator guide's build-shim block does (no package index;
// test/magnum runs that block and installs its wheel into Magnum 15, 20 and
// 23), the build context includes magnum/, and the final stage keeps the
// wheel where the kolla-build override copies it from.
func TestDockerfileCarriesTheShim(t *testing.T) {
	stages := parseDockerfile(t).stages()
	shim := stageNamed(t, stages, "shim")
	runs := shim.instructions("RUN")
	block := guideBlock(t, "build-shim")
	if len(runs) == 0 || runs[len(runs)-1] != block {
		t.Errorf("the shim stage's last RUN is %q, want the operator guide's build-shim block %q", runs, block)
	}
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(makefile), "\t"+strings.Replace(block, "python3 ", "$(PYTHON) ", 1)+"\n") {
		t.Errorf("make wheel does not run the operator guide's build-shim block %q", block)
	}
	ignore, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(ignore), "\n") {
		if strings.TrimSpace(line) == "magnum" || strings.TrimSpace(line) == "magnum/" {
			t.Errorf("Dockerfile.dockerignore excludes magnum/, which the shim stage builds")
		}
	}
	var shipped bool
	for _, c := range stages[len(stages)-1].instructions("COPY") {
		if cp := parseCopy(c); cp.from == "shim" && cp.dst == "/usr/share/magnum-capi/" {
			shipped = true
		}
	}
	if !shipped {
		t.Error("the final stage does not COPY --from=shim the wheel to /usr/share/magnum-capi/")
	}
}

// renderKollaBuild renders the override as kolla-build does: it extends the
// image's Dockerfile template, here a stand-in with the blocks it fills.
func renderKollaBuild(t *testing.T) string {
	t.Helper()
	override, err := os.ReadFile(kollaBuildOverride)
	if err != nil {
		t.Fatal(err)
	}
	const script = `
import json, sys, jinja2
req = json.load(sys.stdin)
env = jinja2.Environment(loader=jinja2.DictLoader(req["templates"]), undefined=jinja2.StrictUndefined)
sys.stdout.write(env.get_template("override").render(parent_template="parent"))
`
	parent := "FROM magnum-base\n{% block magnum_base_footer %}{% endblock %}\n{% block magnum_conductor_footer %}{% endblock %}\n"
	in, _ := json.Marshal(map[string]any{"templates": map[string]string{"override": string(override), "parent": parent}})
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rendering %s with Jinja2: %v\n%s", kollaBuildOverride, err, out)
	}
	return string(out)
}

// TestKollaBuildInstallsTheShim checks the kolla-build override without a
// Docker engine: it installs no package from an index by name (magnum-capi
// is on none), copies only what the sidecar image holds, and its RUN step,
// executed in a virtualenv over Debian's Magnum (Kolla's images install into
// a virtualenv too) against the wheel the operator guide's block builds,
// installs a shim whose magnum_capi driver entry point loads.
func TestKollaBuildInstallsTheShim(t *testing.T) {
	rendered := renderKollaBuild(t)
	source, err := os.ReadFile(kollaBuildOverride)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(source), "pip_packages_append") || strings.Contains(rendered, "magnum-capi==") {
		t.Errorf("the override installs magnum-capi from a package index by name:\n%s", source)
	}
	lines := strings.Split(strings.ReplaceAll(rendered, "\\\n", " "), "\n")
	var copies []dockerCopy
	var run string
	for _, l := range lines {
		word, rest, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch word {
		case "COPY":
			copies = append(copies, parseCopy(rest))
		case "RUN":
			run = rest
		}
	}
	stages := parseDockerfile(t).stages()
	imageHas := map[string]bool{}
	for _, c := range stages[len(stages)-1].instructions("COPY") {
		imageHas[parseCopy(c).dst] = true
	}
	wheelDir := ""
	for _, c := range copies {
		if len(c.src) != 1 || !imageHas[c.src[0]] {
			t.Errorf("the override copies %v from %s, which the sidecar image does not hold (it has %v)", c.src, c.from, imageHas)
		}
		if len(c.src) == 1 && c.src[0] == "/usr/share/magnum-capi/" {
			wheelDir = c.dst
		}
	}
	if wheelDir == "" || run == "" {
		t.Fatalf("the override neither copies the wheel nor installs it (COPY %v, RUN %q)", copies, run)
	}
	installInVenv(t, run, wheelDir)
}

// installInVenv runs the override's RUN step with the wheel the operator
// guide's build-shim block builds in wheelDir's place, in a virtualenv that
// sees Debian's Magnum, grpcio and protobuf, with no package index.
func installInVenv(t *testing.T, run, wheelDir string) {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("/bin/sh", "-ec", "cp -r \"$0\" magnum && "+guideBlock(t, "build-shim"), mustAbs(t, "../magnum"))
	build.Dir = dir
	build.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the build-shim block: %v\n%s", err, out)
	}
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	constraints := filepath.Join(dir, "upper-constraints.txt")
	if err := os.WriteFile(constraints, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	step := strings.ReplaceAll(run, wheelDir, filepath.Join(dir, "dist")+"/")
	step = strings.ReplaceAll(step, "/requirements/upper-constraints.txt", constraints)
	install := exec.Command("/bin/sh", "-ec", step)
	install.Env = []string{"PATH=" + venv + "/bin:/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "PIP_NO_INDEX=1"}
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("the override's RUN %s: %v\n%s", run, err, out)
	}
	const load = `
from importlib.metadata import entry_points
eps = [e for e in entry_points(group="magnum.drivers") if e.name == "magnum_capi"]
assert len(eps) == 1, eps
print(eps[0].load().__module__)
`
	out, err := exec.Command(filepath.Join(venv, "bin", "python3"), "-c", load).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "magnum_capi.driver" {
		t.Fatalf("the installed shim's magnum_capi entry point: %v\n%s", err, out)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
