package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// docRow is one option row of docs/configuration.md:
// | `key` | `ENV` or — | `default` or — | meaning |
var docRow = regexp.MustCompile("^\\| `([^`]+)` \\| (`[A-Z0-9_]+`|—) \\| (`[^`]*`|—) \\| (.+) \\|$")

// TestEveryOptionIsDocumented fails when an option of Config is missing from
// docs/configuration.md, or the document's environment variable or default
// differs from the code's, or the document lists an option that no longer
// exists. Whoever adds an option documents it here.
func TestEveryOptionIsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ env, def, meaning string }
	documented := map[string]row{}
	for _, line := range strings.Split(string(raw), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := documented[m[1]]; dup {
			t.Errorf("docs/configuration.md lists %s twice", m[1])
		}
		documented[m[1]] = row{env: strings.Trim(m[2], "`"), def: m[3], meaning: m[4]}
	}
	defaults := Defaults()
	known := map[string]bool{}
	for _, o := range Options() {
		known[o.Key] = true
		r, ok := documented[o.Key]
		if !ok {
			t.Errorf("option %s (%s) is not documented in docs/configuration.md: add a row | `%s` | %s | default | meaning |", o.Key, o.Type, o.Key, envCell(o.Env))
			continue
		}
		if want := envCell(o.Env); strings.Trim(want, "`") != r.env {
			t.Errorf("docs/configuration.md: %s's environment variable is %s, want %s", o.Key, r.env, want)
		}
		wantDef := "—"
		if d, ok := defaults[o.Key]; ok && d != "" {
			wantDef = "`" + fmt.Sprint(d) + "`"
		}
		if r.def != wantDef {
			t.Errorf("docs/configuration.md: %s's default is %s, the code's is %s", o.Key, r.def, wantDef)
		}
		if len(strings.TrimSpace(r.meaning)) < 20 {
			t.Errorf("docs/configuration.md: %s's meaning %q explains nothing", o.Key, r.meaning)
		}
	}
	for key := range documented {
		if !known[key] {
			t.Errorf("docs/configuration.md documents %s, which is not an option of Config", key)
		}
	}
	for key := range defaults {
		if !known[key] {
			t.Errorf("Defaults() sets %s, which is not an option of Config", key)
		}
	}
	if len(documented) == 0 {
		t.Fatal("no option rows found in docs/configuration.md: did the table format change?")
	}
}

func envCell(env string) string {
	if env == "" {
		return "—"
	}
	return "`" + env + "`"
}

// Every flag is an option and says so in the document.
func TestFlagsAreDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flagOptions {
		want := fmt.Sprintf("| `%s` |", f.key)
		var line string
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, want) {
				line = l
			}
		}
		if !strings.Contains(line, "*flag `--"+FlagName(f.key)+"`*") {
			t.Errorf("docs/configuration.md: the row of %s does not mention its flag --%s", f.key, FlagName(f.key))
		}
	}
}

// optionRef is a backquoted sidecar option in prose: `values.keystoneAuthURL`,
// `chart.cacheDir`, `managementClusters[].qps`.
var optionRef = regexp.MustCompile("`((?:values|chart|helm|openstack|timeouts|log|tls|argocd|managementClusters\\[\\])\\.[A-Za-z]+)`")

// legacyNames are the driver-configuration names the documents used before
// serve read these settings (only `render --config` did); each now has one
// name, its sidecar option.
var legacyNames = regexp.MustCompile("\\b(keystone_auth_url|label_defaults|registry_mirrors|mirrored_registries|keep_chart_registry_mirrors|trusted_cas|csi_cinder_default_volume_type|default_chart_version|strict_labels)\\b")

// TestDocsNameOnlyOptions: every sidecar option the operator documents
// name is one serve reads, under that one name.
func TestDocsNameOnlyOptions(t *testing.T) {
	known := map[string]bool{}
	for _, o := range Options() {
		known[o.Key] = true
	}
	for _, doc := range []string{"labels.md", "configuration.md", "operator-guide.md", "gitops.md"} {
		raw, err := os.ReadFile("../../docs/" + doc)
		if err != nil {
			t.Fatal(err)
		}
		refs := optionRef.FindAllStringSubmatch(string(raw), -1)
		for _, m := range refs {
			if !known[m[1]] {
				t.Errorf("docs/%s names `%s`, which is not an option serve reads", doc, m[1])
			}
		}
		if doc == "labels.md" && len(refs) == 0 {
			t.Errorf("docs/labels.md names no sidecar option: did the naming change?")
		}
		for _, m := range legacyNames.FindAllString(string(raw), -1) {
			t.Errorf("docs/%s names %s: the option is now under values.* (docs/configuration.md)", doc, m)
		}
	}
}
