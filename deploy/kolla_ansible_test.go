package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// ansibleEmulation evaluates what the patch adds the way Ansible would,
// without Ansible (not installed here): variables are Jinja expressions
// resolved lazily from the patch's defaults and group_vars plus the test's
// own (like inventory vars, which win); "{{ ... }}" values keep their native
// type; the lookups the tasks use (file, ini, fileglob) and the filters
// (bool, difference, kolla_address, put_address_in_context) behave as
// Ansible's and Kolla's do, including the ini lookup's error on a missing
// section. merge_configs is Kolla's: later sources replace an option.
const ansibleEmulation = `
import configparser, glob, json, os, sys
import jinja2, jinja2.meta, yaml
from jinja2.nativetypes import NativeEnvironment

req = json.load(sys.stdin)
raw = {}
for text in req.get("vardefs", []):
    raw.update(yaml.safe_load(text) or {})
raw.update(req.get("vars", {}))

def lookup(name, *terms, **kw):
    name = name.split(".")[-1]
    if name == "file":
        return open(terms[0]).read().rstrip()
    if name == "ini":
        cp = configparser.ConfigParser(interpolation=None)
        cp.optionxform = str
        cp.read(kw["file"])
        try:
            return cp.get(kw["section"], terms[0])
        except configparser.NoOptionError:
            return kw.get("default", "")
    if name == "fileglob":
        return [p for t in terms for p in sorted(glob.glob(t)) if os.path.isfile(p)]
    raise ValueError("lookup " + name)

def query(name, *terms, **kw):
    r = lookup(name, *terms, **kw)
    return r if isinstance(r, list) else [r]

def as_bool(v):
    return v if isinstance(v, bool) else str(v).lower() in ("yes", "true", "1", "on")

def kolla_address(kind, host, override_var=None):
    return raw["hostvars"][host][kind + "_interface_address"]

def in_context(addr, context):
    return "[" + addr + "]" if ":" in addr else addr

def setup(env):
    env.filters.update({"bool": as_bool, "kolla_address": kolla_address, "put_address_in_context": in_context,
        "difference": lambda a, b: [x for x in a if x not in b]})
    env.globals.update({"lookup": lookup, "query": query})
    return env

native = setup(NativeEnvironment(undefined=jinja2.StrictUndefined))
text = setup(jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True))
resolved = {}

def resolve_names(env, source):
    for n in jinja2.meta.find_undeclared_variables(env.parse(source)):
        if n not in resolved and n in raw:
            resolved[n] = None
            resolved[n] = value(raw[n])

def value(v):
    if isinstance(v, str) and ("{{" in v or "{%" in v):
        resolve_names(native, v)
        return native.from_string(v).render(**resolved)
    if isinstance(v, list):
        return [value(x) for x in v]
    if isinstance(v, dict):
        return {k: value(x) for k, x in v.items()}
    return v

def render(source):
    resolve_names(text, source)
    return text.from_string(source).render(**resolved)

def run_task(task):
    """The loop items for which the task runs (all when conditions true), with its rendered msg."""
    items = value(task["loop"]) if "loop" in task else [None]
    when = task.get("when", [])
    when = when if isinstance(when, list) else [when]
    ran = []
    for item in items:
        resolved["item"] = item
        for k, v in task.get("vars", {}).items():
            resolved[k] = value(v)
        if all(value("{{ " + str(c) + " }}") for c in when):
            module = [k for k in task if k not in ("name", "vars", "when", "loop", "run_once", "become", "check_mode", "register", "delegate_to")][0]
            args = task[module]
            ran.append({"item": item, "msg": value(args["msg"]) if isinstance(args, dict) and "msg" in args else ""})
    return ran

def merge_configs(texts):
    merged = {}
    for t in texts:
        cp = configparser.ConfigParser(interpolation=None, strict=False)
        cp.optionxform = str
        cp.read_string(t)
        for s in cp.sections():
            merged.setdefault(s, {}).update(dict(cp.items(s, raw=True)))
    return merged

out = {}
for name, source in req.get("render", {}).items():
    out[name] = render(source)
if "merge" in req:
    out["merged"] = merge_configs([out[req["merge"][0]]] + req["merge"][1:])
if "tasks" in req:
    out["tasks"] = {t["name"]: run_task(t) for t in yaml.safe_load(req["tasks"])}
json.dump(out, sys.stdout)
`

// ansibleRequest is one evaluation: variable definitions (YAML documents),
// the test's variables, templates to render by name, a merge of the
// rendered template named first with override files' contents, and tasks
// (a YAML list) to run.
type ansibleRequest struct {
	VarDefs []string          `json:"vardefs,omitempty"`
	Vars    map[string]any    `json:"vars,omitempty"`
	Render  map[string]string `json:"render,omitempty"`
	Merge   []string          `json:"merge,omitempty"`
	Tasks   string            `json:"tasks,omitempty"`
}

type ansibleResult struct {
	Merged map[string]map[string]string `json:"merged"`
	Tasks  map[string][]struct {
		Item any    `json:"item"`
		Msg  string `json:"msg"`
	} `json:"tasks"`
	Rendered map[string]string `json:"-"`
}

func evalAnsible(t *testing.T, req ansibleRequest) (ansibleResult, map[string]any) {
	t.Helper()
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", ansibleEmulation)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("evaluating the patch as Ansible would (/usr/bin/python3, jinja2, yaml): %v\n%s", err, stderr.String())
	}
	var res ansibleResult
	var all map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatal(err)
	}
	return res, all
}

// patchVarDefs returns the patch's top-level variable definitions of
// defaults/main.yml and group_vars (single-line ones and the lists), each a
// YAML document: the added lines also hold fragments of Kolla's own
// mappings, which are not variables.
func patchVarDefs(files map[string]string) []string {
	var defs []string
	def := regexp.MustCompile(`(?m)^([a-z_]+):( .+)?\n((?:  - .+\n)*)`)
	for _, f := range []string{"ansible/group_vars/all/magnum.yml", "ansible/roles/magnum/defaults/main.yml"} {
		for _, m := range def.FindAllString(files[f], -1) {
			defs = append(defs, m)
		}
	}
	return defs
}

// patchTasks returns the tasks the patch appends to a task file, as YAML.
func patchTasks(t *testing.T, files map[string]string, file string) string {
	t.Helper()
	added := files[file]
	if !strings.Contains(added, "- name: ") {
		t.Fatalf("the patch adds no task to %s", file)
	}
	return added
}

// patchPostImage returns the text of file's hunks after the patch (context
// and added lines), from the first line starting with from.
func patchPostImage(t *testing.T, file, from string) string {
	t.Helper()
	raw, err := os.ReadFile(kollaPatch)
	if err != nil {
		t.Fatal(err)
	}
	var cur string
	var post strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "+++ b/"):
			cur = strings.TrimPrefix(line, "+++ b/")
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "-"), strings.HasPrefix(line, "@@"), strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "index "):
		case cur == file && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, " ")):
			post.WriteString(line[1:] + "\n")
		}
	}
	_, after, ok := strings.Cut(post.String(), "\n"+from)
	if !ok {
		t.Fatalf("%s: the patch's %s has no line starting %q", kollaPatch, file, from)
	}
	return from + after
}
