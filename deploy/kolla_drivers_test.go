package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var vexxhostDrivers = []string{"k8s_cluster_api_flatcar", "k8s_cluster_api_rockylinux", "k8s_cluster_api_ubuntu", "k8s_cluster_api_ubuntu_focal"}

const overridesCheck = "Checking that magnum.conf overrides keep the drivers the magnum role disables"

// TestKollaDrivers evaluates the patch's [drivers] section of magnum.conf and
// its precheck as Ansible would, merged with operators' overrides as Kolla's
// merge_configs merges them: with the sidecar, VEXXHOST's drivers (Kolla's
// images carry them, claiming the same tuples) are disabled unless kept, and
// magnum_capi is Magnum master's default driver; an override of
// disabled_drivers, which replaces the role's list and so enables them
// again, is refused by the precheck naming what it would enable, while one
// that keeps them, or an override without [drivers], passes; further
// drivers go to magnum_disabled_drivers_extra.
func TestKollaDrivers(t *testing.T) {
	files := patchFiles(t)
	tests := []struct {
		name      string
		vars      map[string]any
		overrides map[string]string // file under node_custom_config → content
		disabled  []string          // merged [drivers] disabled_drivers
		deflt     string            // merged [drivers] default_driver
		refused   string            // the override file the precheck refuses
	}{
		{name: "sidecar", disabled: vexxhostDrivers, deflt: "magnum_capi"},
		{name: "override replacing the list", overrides: map[string]string{"magnum.conf": "[drivers]\ndisabled_drivers = k8s_fedora_coreos_v1\n"},
			disabled: []string{"k8s_fedora_coreos_v1"}, deflt: "magnum_capi", refused: "magnum.conf"},
		{name: "per-service override replacing the list", overrides: map[string]string{"magnum/magnum-conductor.conf": "[DEFAULT]\ndebug = true\n[drivers]\ndisabled_drivers = \n"},
			disabled: []string{""}, deflt: "magnum_capi", refused: "magnum/magnum-conductor.conf"},
		{name: "override keeping the list", overrides: map[string]string{"magnum.conf": "[drivers]\ndisabled_drivers = " + strings.Join(append(slices.Clone(vexxhostDrivers), "k8s_fedora_coreos_v1"), ", ") + "\n"},
			disabled: append(slices.Clone(vexxhostDrivers), "k8s_fedora_coreos_v1"), deflt: "magnum_capi"},
		{name: "override without [drivers]", overrides: map[string]string{"magnum.conf": "[DEFAULT]\ndebug = true\n", "magnum/ctl1/magnum.conf": "[magnum_capi]\ncall_timeout = 50\n"},
			disabled: vexxhostDrivers, deflt: "magnum_capi"},
		{name: "further drivers", vars: map[string]any{"magnum_disabled_drivers_extra": []string{"k8s_fedora_coreos_v1"}},
			disabled: append(slices.Clone(vexxhostDrivers), "k8s_fedora_coreos_v1"), deflt: "magnum_capi"},
		{name: "VEXXHOST's drivers kept", vars: map[string]any{"magnum_capi_keep_vexxhost_drivers": true}, deflt: "magnum_capi"},
		// Kolla's own behaviour without the sidecar is unchanged.
		{name: "no sidecar, VEXXHOST's driver", vars: map[string]any{"enable_magnum_capi_sidecar": false}},
		{name: "no sidecar, no kubeconfig", vars: map[string]any{"enable_magnum_capi_sidecar": false, "magnum_kubeconfig_file_path": nil}, disabled: vexxhostDrivers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			custom := t.TempDir()
			var contents []string
			for _, name := range []string{"global.conf", "magnum.conf", "magnum/magnum-conductor.conf", "magnum/ctl1/magnum.conf"} {
				if c, ok := tt.overrides[name]; ok {
					writeFile(t, filepath.Join(custom, name), c)
					contents = append(contents, c)
				}
			}
			vars := map[string]any{
				"enable_magnum_capi_sidecar":  true,
				"magnum_kubeconfig_file_path": "/etc/kolla/config/magnum/kubeconfig",
				"magnum_capi_sidecar_address": "unix:///run/magnum-capi/magnum-capi.sock",
				"node_custom_config":          custom,
				"inventory_hostname":          "ctl1",
				"groups":                      map[string]any{"magnum-conductor": []string{"ctl1"}},
				"api_interface_address":       "10.0.0.11",
				"magnum_capi_kubeconfig":      map[string]any{"stat": map[string]any{"exists": true}},
				"magnum_capi_container_facts": map[string]any{"containers": map[string]any{}},
			}
			for k, v := range tt.vars {
				if v == nil {
					delete(vars, k)
				} else {
					vars[k] = v
				}
			}
			res, _ := evalAnsible(t, ansibleRequest{
				VarDefs: patchVarDefs(files),
				Vars:    vars,
				Render:  map[string]string{"magnum.conf": patchPostImage(t, "ansible/roles/magnum/templates/magnum.conf.j2", "{# magnum_disabled_drivers")},
				Merge:   append([]string{"magnum.conf"}, contents...),
				Tasks:   patchTasks(t, files, "ansible/roles/magnum/tasks/precheck.yml"),
			})
			drivers := res.Merged["drivers"]
			var disabled []string
			if v, ok := drivers["disabled_drivers"]; ok {
				for _, d := range strings.Split(v, ",") {
					disabled = append(disabled, strings.TrimSpace(d))
				}
			}
			if !slices.Equal(disabled, tt.disabled) || drivers["default_driver"] != tt.deflt {
				t.Errorf("merged [drivers]: %v; want disabled_drivers %v, default_driver %q", drivers, tt.disabled, tt.deflt)
			}
			refused := res.Tasks[overridesCheck]
			switch {
			case tt.refused == "" && len(refused) > 0:
				t.Errorf("the precheck refuses %v, want none refused", refused)
			case tt.refused != "" && (len(refused) != 1 || refused[0].Item != filepath.Join(custom, tt.refused) ||
				!strings.Contains(refused[0].Msg, "k8s_cluster_api_ubuntu") || !strings.Contains(refused[0].Msg, "magnum_disabled_drivers_extra")):
				t.Errorf("the precheck refuses %+v; want %s, naming the drivers it would enable and magnum_disabled_drivers_extra", refused, tt.refused)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKollaMetricsPortAndScrape: the precheck checks the sidecar's metrics
// port is free where the sidecar is not running yet (as Kolla checks its API
// ports), and Prometheus scrapes every conductor host's sidecar at the
// address its magnum-capi.yaml listens on (IPv6 in brackets).
func TestKollaMetricsPortAndScrape(t *testing.T) {
	files := patchFiles(t)
	hosts := map[string]string{"ctl1": "10.0.0.11", "ctl2": "fd00::12"}
	for _, running := range []bool{false, true} {
		containers := map[string]any{}
		if running {
			containers["magnum_capi_sidecar"] = map[string]any{}
		}
		res, all := evalAnsible(t, ansibleRequest{
			VarDefs: patchVarDefs(files),
			Vars: map[string]any{
				"enable_magnum_capi_sidecar": true, "node_custom_config": t.TempDir(), "inventory_hostname": "ctl2",
				"api_interface_address": hosts["ctl2"], "groups": map[string]any{"magnum-conductor": []string{"ctl1", "ctl2"}},
				"hostvars":                    map[string]any{"ctl1": map[string]any{"api_interface_address": hosts["ctl1"], "magnum_capi_sidecar_metrics_port": "9561"}, "ctl2": map[string]any{"api_interface_address": hosts["ctl2"], "magnum_capi_sidecar_metrics_port": "9561"}},
				"magnum_capi_kubeconfig":      map[string]any{"stat": map[string]any{"exists": true}},
				"magnum_capi_container_facts": map[string]any{"containers": containers},
				"magnum_logging_debug":        false,
			},
			Render: map[string]string{
				"prometheus": files["ansible/roles/prometheus/templates/prometheus.yml.j2"],
				"address":    "{{ magnum_capi_sidecar_metrics_address }}",
			},
			Tasks: patchTasks(t, files, "ansible/roles/magnum/tasks/precheck.yml"),
		})
		var portCheck string
		for _, task := range regexp.MustCompile(`(?m)^- name: (.+)$`).FindAllStringSubmatch(files["ansible/roles/magnum/tasks/precheck.yml"], -1) {
			if strings.Contains(task[1], "free port") && strings.Contains(task[1], "metrics") {
				portCheck = task[1]
			}
		}
		if portCheck == "" || !strings.Contains(files["ansible/roles/magnum/tasks/precheck.yml"], `port: "{{ magnum_capi_sidecar_metrics_port }}"`) {
			t.Fatal("the precheck has no free-port check of magnum_capi_sidecar_metrics_port")
		}
		if ran := len(res.Tasks[portCheck]) == 1; ran == running {
			t.Errorf("sidecar running %v: the port check ran %v, want it only before the sidecar runs", running, ran)
		}
		if running {
			continue
		}
		scrape := all["prometheus"].(string)
		address := all["address"].(string)
		for host, ip := range hosts {
			want := ip
			if strings.Contains(ip, ":") {
				want = "[" + ip + "]"
			}
			if !strings.Contains(scrape, "'"+want+":9561'") {
				t.Errorf("the Prometheus job does not scrape %s at %s:9561:\n%s", host, want, scrape)
			}
		}
		if address != "[fd00::12]:9561" || !strings.Contains(scrape, "job_name: magnum_capi_sidecar") {
			t.Errorf("magnum-capi.yaml's metricsAddress on ctl2 is %q (want [fd00::12]:9561, what Prometheus scrapes):\n%s", address, scrape)
		}
	}
}
