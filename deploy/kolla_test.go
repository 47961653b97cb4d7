package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/server/config"
)

const kollaPatch = "kolla-ansible/kolla-ansible-magnum-capi.patch"

// patchFiles returns, per file the patch touches, the lines it adds (for a
// new file: the whole file).
func patchFiles(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(kollaPatch)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "+++ b/"):
			cur = strings.TrimPrefix(line, "+++ b/")
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		case strings.HasPrefix(line, "+") && cur != "":
			files[cur] += strings.TrimPrefix(line, "+") + "\n"
		}
	}
	if len(files) == 0 {
		t.Fatalf("%s adds nothing", kollaPatch)
	}
	return files
}

// kollaVars are the Kolla-Ansible variables the templates use; cacert is
// openstack_cacert ("" when OpenStack's certificates are publicly trusted).
func kollaVars(cacert string) map[string]any {
	return map[string]any{
		"container_config_directory":          "/var/lib/kolla/config_files",
		"magnum_kubeconfig_file_path":         "/etc/kolla/config/magnum/kubeconfig",
		"kolla_copy_ca_into_containers":       cacert != "",
		"magnum_capi_sidecar_address":         "unix:///run/magnum-capi/magnum-capi.sock",
		"magnum_capi_sidecar_metrics_address": "10.0.0.11:9561",
		"magnum_capi_sidecar_log_level":       "info",
		"magnum_capi_sidecar_log_file":        "/var/log/kolla/magnum/magnum-capi-sidecar.log",
		"magnum_capi_chart_repository":        "https://azimuth-cloud.github.io/capi-helm-charts",
		"magnum_capi_chart_version":           "0.27.0",
		"keystone_public_url":                 "https://cloud.example.com:5000",
		"keystone_internal_url":               "https://internal.example.com:5000",
		"openstack_region_name":               "RegionOne",
		"openstack_cacert":                    cacert,
		"magnum_keystone_user":                "magnum",
		"magnum_keystone_password":            "service-password",
		"default_user_domain_name":            "Default",
		"default_project_domain_name":         "Default",
	}
}

// TestKollaTemplates renders the templates the patch adds with Ansible's
// own template module and checks them against the sidecar: config.json is valid and copies every file the
// sidecar's configuration names, and that configuration loads with the
// sidecar's own loader.
func TestKollaTemplates(t *testing.T) {
	t.Parallel()
	files := patchFiles(t)
	const templates = "ansible/roles/magnum/templates/"
	// One stand-in directory and variable set without and with a CA,
	// rendered in one Ansible run.
	cases := []bool{false, true}
	var dirs []string
	var varSets []map[string]any
	for _, withCA := range cases {
		dir := t.TempDir()
		for _, f := range []string{"kubeconfig", "clouds.yaml", "ca.pem"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("{}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cacert := ""
		if withCA {
			cacert = filepath.Join(dir, "ca.pem")
		}
		dirs, varSets = append(dirs, dir), append(varSets, kollaVars(cacert))
	}
	renders := renderWithAnsible(t, map[string]string{
		"config.json":      files[templates+"magnum-capi-sidecar.json.j2"],
		"magnum-capi.yaml": files[templates+"magnum-capi.yaml.j2"],
		"clouds.yaml":      files[templates+"magnum-capi-clouds.yaml.j2"],
	}, varSets...)
	for i, withCA := range cases {
		dir, vars, rendered := dirs[i], varSets[i], renders[i]
		var start struct {
			Command     string `json:"command"`
			ConfigFiles []struct {
				Source, Dest, Owner, Perm string
			} `json:"config_files"`
			Directories []struct{ Path, Owner, Perm string } `json:"directories"`
		}
		if err := json.Unmarshal([]byte(rendered["config.json"]), &start); err != nil {
			t.Fatalf("config.json (CA %v) is not JSON: %v", withCA, err)
		}
		if start.Command != "magnum-capi serve --config /etc/magnum-capi/magnum-capi.yaml" {
			t.Errorf("config.json command = %q", start.Command)
		}
		copied := map[string]bool{}
		for _, f := range start.ConfigFiles {
			copied[f.Dest] = true
			if strings.HasPrefix(f.Dest, "/etc/magnum-capi/") && (f.Owner != "magnum" || f.Perm != "0600") {
				t.Errorf("%s is copied as %s %s, want magnum 0600 (it may hold secrets)", f.Dest, f.Owner, f.Perm)
			}
		}

		sidecarYAML := rendered["magnum-capi.yaml"]
		// The files it names must be what config.json puts in place.
		for _, path := range regexp.MustCompile(`/etc/magnum-capi/[\w.-]+`).FindAllString(sidecarYAML, -1) {
			if !copied[path] {
				t.Errorf("magnum-capi.yaml names %s, which config.json does not copy", path)
			}
		}
		// Load it as `serve` would, with the copied files stood in for.
		local := strings.ReplaceAll(sidecarYAML, "/etc/magnum-capi/", dir+"/")
		file := filepath.Join(dir, "magnum-capi.yaml")
		if err := os.WriteFile(file, []byte(local), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(file, nil)
		if err != nil {
			t.Fatalf("the sidecar refuses the configuration Kolla-Ansible writes (CA %v): %v\n%s", withCA, err, sidecarYAML)
		}
		// The log goes where Kolla's services log, into a directory
		// kolla_start gives the magnum user.
		logDir := ""
		for _, d := range start.Directories {
			if d.Path == filepath.Dir(cfg.Log.File) && strings.HasPrefix(d.Owner, "magnum:") {
				logDir = d.Path
			}
		}
		if cfg.Log.File != vars["magnum_capi_sidecar_log_file"] || logDir == "" {
			t.Errorf("log.file %q: want magnum_capi_sidecar_log_file in a directory config.json makes the magnum user's (%+v)", cfg.Log.File, start.Directories)
		}
		if cfg.Listen != vars["magnum_capi_sidecar_address"] || cfg.OpenStack.Cloud != "magnum" || (cfg.OpenStack.CAFile != "") != withCA {
			t.Errorf("configuration: listen %s cloud %s caFile %q", cfg.Listen, cfg.OpenStack.Cloud, cfg.OpenStack.CAFile)
		}

		var clouds struct {
			Clouds map[string]struct {
				Auth       map[string]string `json:"auth"`
				RegionName string            `json:"region_name"`
				Interface  string            `json:"interface"`
				CACert     string            `json:"cacert"`
			} `json:"clouds"`
		}
		if err := yaml.UnmarshalStrict([]byte(rendered["clouds.yaml"]), &clouds); err != nil {
			t.Fatalf("clouds.yaml: %v", err)
		}
		c, ok := clouds.Clouds[cfg.OpenStack.Cloud]
		if !ok || c.Auth["username"] != "magnum" || c.Auth["auth_url"] == "" || (c.CACert != "") != withCA {
			t.Errorf("clouds.yaml has no usable cloud %q: %+v", cfg.OpenStack.Cloud, clouds)
		}
	}
}

// TestKollaService checks the role changes against Kolla-Ansible's naming
// rules and the sidecar: service-check-containers notifies
// "Restart <service key> container"; the health check and magnum.conf use
// the socket the sidecar listens on; the conductor mounts the socket volume.
func TestKollaService(t *testing.T) {
	files := patchFiles(t)
	defaults := files["ansible/roles/magnum/defaults/main.yml"]
	handlers := files["ansible/roles/magnum/handlers/main.yml"]
	conf := files["ansible/roles/magnum/templates/magnum.conf.j2"]

	key := regexp.MustCompile(`(?m)^  ([a-z-]+):\n    container_name: ([a-z_]+)`).FindStringSubmatch(defaults)
	if key == nil || key[1] != "magnum-capi-sidecar" || key[2] != "magnum_capi_sidecar" {
		t.Fatalf("no magnum_services entry magnum-capi-sidecar with container_name magnum_capi_sidecar: %v", key)
	}
	var handler []struct {
		Name string         `json:"name"`
		Vars map[string]any `json:"vars"`
	}
	if err := yaml.Unmarshal([]byte(handlers), &handler); err != nil {
		t.Fatalf("handlers: %v", err)
	}
	if len(handler) != 1 || handler[0].Name != "Restart "+key[1]+" container" || handler[0].Vars["service_name"] != key[1] {
		t.Errorf("handler %+v: want one named %q for service %s", handler, "Restart "+key[1]+" container", key[1])
	}

	address := regexp.MustCompile(`magnum_capi_sidecar_address: "([^"]+)"`).FindStringSubmatch(defaults)
	if address == nil || address[1] != config.Defaults()["listen"] {
		t.Errorf("magnum_capi_sidecar_address %v is not the sidecar's default socket %v", address, config.Defaults()["listen"])
	}
	for what, want := range map[string]string{
		"health check":                   `"magnum-capi health --address {{ magnum_capi_sidecar_address }}"`,
		"socket volume of the sidecar":   `- "magnum_capi_run:/run/magnum-capi/"`,
		"socket volume of the conductor": `'magnum_capi_run:/run/magnum-capi/' if enable_magnum_capi_sidecar | bool`,
		"chart cache volume":             `"magnum_capi_cache:/var/cache/magnum-capi/"`,
	} {
		if !strings.Contains(defaults, want) {
			t.Errorf("defaults/main.yml: no %s (%s)", what, want)
		}
	}
	if !strings.Contains(conf, "sidecar_address = {{ magnum_capi_sidecar_address }}") {
		t.Error("magnum.conf.j2 does not point the shim at magnum_capi_sidecar_address")
	}
	// The shim's own default must be the same socket, for hand-written
	// magnum.conf files.
	shimConf, err := os.ReadFile("../magnum/magnum_capi/conf.py")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(shimConf), `default="`+address[1]+`"`) {
		t.Errorf("the shim's sidecar_address default is not %s", address[1])
	}
}
