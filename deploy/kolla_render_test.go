package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// renderWithAnsible renders templates (by name) as the role's template
// tasks do, with Ansible's own template module (ansible-core, Debian's) on
// localhost: once per set of variables, each set a play of one playbook run
// (Ansible starts slowly). It returns the rendered files per set.
func renderWithAnsible(t *testing.T, templates map[string]string, varSets ...map[string]any) []map[string]string {
	t.Helper()
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		t.Skip("ansible-playbook is not installed: make deps (hack/deps.sh) installs Debian's ansible-core")
	}
	dir := t.TempDir()
	for name, text := range templates {
		if err := os.WriteFile(filepath.Join(dir, name+".j2"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var plays strings.Builder
	for i, vars := range varSets {
		raw, err := json.Marshal(vars)
		if err != nil {
			t.Fatal(err)
		}
		varsFile := filepath.Join(dir, fmt.Sprintf("vars%d.json", i))
		if err := os.WriteFile(varsFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprint(i)), 0o700); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&plays, "- hosts: localhost\n  gather_facts: false\n  vars_files: [%q]\n  tasks:\n", varsFile)
		for name := range templates {
			fmt.Fprintf(&plays, "    - ansible.builtin.template: {src: %q, dest: %q, mode: \"0600\"}\n", filepath.Join(dir, name+".j2"), filepath.Join(dir, fmt.Sprint(i), name))
		}
	}
	play := filepath.Join(dir, "play.yml")
	if err := os.WriteFile(play, []byte(plays.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(playbook, "-i", "localhost,", "-c", "local", play)
	cmd.Env = append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"), "ANSIBLE_HOME="+filepath.Join(dir, "home"), "ANSIBLE_NOCOLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ansible-playbook rendering %d templates: %v\n%s", len(templates), err, out)
	}
	out := make([]map[string]string, len(varSets))
	for i := range varSets {
		out[i] = map[string]string{}
		for name := range templates {
			text, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i), name))
			if err != nil {
				t.Fatal(err)
			}
			out[i][name] = string(text)
		}
	}
	return out
}
