package helmvalues

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestLabelRegistry(t *testing.T) {
	seen := map[string]string{}
	claim := func(name, what string) {
		if other, dup := seen[name]; dup {
			t.Errorf("%s is both %s and %s", name, other, what)
		}
		seen[name] = what
	}
	for _, spec := range labelSpecs {
		claim(spec.Name, "a label")
		for _, alias := range spec.Aliases {
			claim(alias, "an alias of "+spec.Name)
		}
	}
	for name := range ignoredLabels {
		claim(name, "an ignored label")
	}

	for i := range labelSpecs {
		spec := &labelSpecs[i]
		t.Run(spec.Name, func(t *testing.T) {
			if spec.Doc == "" || spec.Group == "" || len(spec.Keys) == 0 || spec.Type.Doc == "" {
				t.Error("every label needs a group, a doc, its chart keys and a typed parser")
			}
			if len(spec.Valid) == 0 || len(spec.Invalid) == 0 {
				t.Error("every label needs valid and invalid examples")
			}
			if spec.Default != "" {
				if _, expected := parseLabelValue(spec, spec.Default); expected != "" {
					t.Errorf("default %q does not parse: %s", spec.Default, expected)
				}
			}
			for _, v := range spec.Valid {
				if _, expected := parseLabelValue(spec, v); expected != "" {
					t.Errorf("valid example %q refused: %s", v, expected)
				}
			}
			for _, v := range spec.Invalid {
				if _, expected := parseLabelValue(spec, v); expected == "" {
					t.Errorf("invalid example %q accepted", v)
				}
			}
			// No label accepts template syntax or control characters,
			// whatever its type.
			for _, v := range []string{"{{ .Values.x }}", "{% if x %}", "{# c #}", "a\nb", "a\x00b"} {
				if _, expected := parseLabelValue(spec, v); expected == "" {
					t.Errorf("accepted %q", v)
				}
			}
		})
	}
}

func TestBoolLabelForms(t *testing.T) {
	spec := labelRegistry["monitoring_enabled"]
	for raw, want := range map[string]bool{"1": true, "t": true, "TRUE": true, "On": true, "y": true, "yes": true, " true ": true,
		"0": false, "f": false, "False": false, "OFF": false, "n": false, "no": false} {
		got, expected := parseLabelValue(spec, raw)
		if expected != "" || got != want {
			t.Errorf("%q = %v (%s), want %v", raw, got, expected, want)
		}
	}
	for _, raw := range []string{"2", "enabled", "tru", "yess", "-"} {
		if _, expected := parseLabelValue(spec, raw); expected == "" {
			t.Errorf("%q accepted", raw)
		}
	}
}

func TestListLabels(t *testing.T) {
	spec := labelRegistry["api_master_lb_allowed_cidrs"]
	got, expected := parseLabelValue(spec, " 10.0.0.0/8, ,203.0.113.7,10.0.0.0/8,2001:db8::1 ")
	if expected != "" {
		t.Fatal(expected)
	}
	want := []string{"10.0.0.0/8", "203.0.113.7/32", "2001:db8::1/128"}
	if strings.Join(got.([]string), ",") != strings.Join(want, ",") {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, expected := parseLabelValue(spec, " , "); expected == "" {
		t.Error("an empty list was accepted")
	}
	if _, expected := parseLabelValue(spec, manyCIDRs(70)); expected == "" {
		t.Error("a list of 70 networks was accepted")
	}
}

func manyCIDRs(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = "10." + strconv.Itoa(i) + ".0.0/16"
	}
	return strings.Join(items, ",")
}

// labelCompanions are labels set alongside the one under test so that its
// effect shows (min_node_count only matters with autoscaling, and so on).
var labelCompanions = map[string]map[string]string{
	"audit_log_max_age":             {"audit_log_enabled": "true"},
	"audit_log_max_backup":          {"audit_log_enabled": "true"},
	"audit_log_max_size":            {"audit_log_enabled": "true"},
	"min_node_count":                {"auto_scaling_enabled": "true", "max_node_count": "20"},
	"max_node_count":                {"auto_scaling_enabled": "true", "min_node_count": "1"},
	"oidc_client_id":                {"oidc_issuer_url": "https://sso.example.com"},
	"oidc_username_claim":           {"oidc_issuer_url": "https://sso.example.com", "oidc_client_id": "kubernetes"},
	"oidc_username_prefix":          {"oidc_issuer_url": "https://sso.example.com", "oidc_client_id": "kubernetes"},
	"oidc_groups_claim":             {"oidc_issuer_url": "https://sso.example.com", "oidc_client_id": "kubernetes"},
	"oidc_groups_prefix":            {"oidc_issuer_url": "https://sso.example.com", "oidc_client_id": "kubernetes"},
	"oidc_signing_algs":             {"oidc_issuer_url": "https://sso.example.com", "oidc_client_id": "kubernetes"},
	"oidc_issuer_url":               {"oidc_client_id": "kubernetes"},
	"boot_volume_type":              {"boot_volume_size": "30"},
	"boot_volume_availability_zone": {"boot_volume_size": "30"},
	"etcd_blockdevice_type":         {"etcd_blockdevice_size": "10"},
	"etcd_blockdevice_volume_type":  {"etcd_blockdevice_size": "10"},
	"etcd_blockdevice_volume_az":    {"etcd_blockdevice_size": "10"},
	"manila_csi_share_type":         {"manila_csi_enabled": "true"},
	"cilium_ipv4pool":               {},
	"manila_csi_share_network_id":   {"manila_csi_enabled": "true", "manila_csi_share_type": "nfs-servers"},
	"manila_csi_share_protocol":     {"manila_csi_enabled": "true", "manila_csi_share_type": "nfs1"},
	"cilium_hubble_ui_enabled":      {"capi_network_driver": "cilium"},
}

// labelExample is one line of a label's golden file.
type labelExample struct {
	Value    string   `json:"value"`
	Where    string   `json:"where,omitempty"`
	Changes  []string `json:"changes,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Errors   []string `json:"errors,omitempty"`
}

// exampleInput is the minimal cluster with one example of a label set where
// it is given ("template", "node group", or "" for the cluster), beside the
// companions the label needs.
func exampleInput(t testing.TB, spec *labelSpec, value, where string) Input {
	in := minimalInput(t)
	if spec.Name == "boot_volume_type" || spec.Name == "etcd_blockdevice_volume_type" {
		in.VolumeTypes = append(in.VolumeTypes, VolumeType{ID: "c1d2e3f4-0000-4000-8000-000000000002", Name: value})
	}
	if spec.Name == "docker_volume_type" {
		size := 40
		in.Cluster.DockerVolumeSize = &size
		in.VolumeTypes = append(in.VolumeTypes, VolumeType{ID: "c1d2e3f4-0000-4000-8000-000000000003", Name: value})
	}
	if spec.Name == "cilium_ipv4pool" {
		in.ClusterTemplate.NetworkDriver = "cilium"
	}
	labels := map[string]string{}
	for k, v := range labelCompanions[spec.Name] {
		labels[k] = v
	}
	switch where {
	case "template":
		in.ClusterTemplate.Labels = map[string]string{spec.Name: value}
		in.Cluster.Labels = labels
	case "node group":
		in.Cluster.Labels = labels
		in.NodeGroups[1].Labels = map[string]string{spec.Name: value}
	default:
		labels[spec.Name] = value
		in.Cluster.Labels = labels
	}
	return in
}

// TestLabelGolden records, for every label and every valid and invalid
// example, what it changes in the minimal cluster's values, or the error it
// gives, in testdata/labels/<label>.golden.yaml.
func TestLabelGolden(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KeystoneAuthURL = "https://keystone.example.com:5000/v3"
	baseline, err := Build(minimalInput(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	baseWarnings := map[string]bool{}
	for _, w := range baseline.Warnings {
		baseWarnings[w] = true
	}
	run := func(spec *labelSpec, value, where string) labelExample {
		res, err := Build(exampleInput(t, spec, value, where), cfg)
		ex := labelExample{Value: value, Where: where, Errors: splitErrors(err)}
		for _, w := range res.Warnings {
			if !baseWarnings[w] {
				ex.Warnings = append(ex.Warnings, w)
			}
		}
		if err == nil {
			assertChartKeys(t, res.Values)
			assertKubeadmSchema(t, res.Values)
			for _, c := range DiffValues(baseline.Values, res.Values) {
				ex.Changes = append(ex.Changes, c.String())
			}
			ex.Changes = append(ex.Changes, patchChanges(baseline.SpecPatches, res.SpecPatches)...)
		}
		return ex
	}
	for i := range labelSpecs {
		spec := &labelSpecs[i]
		t.Run(spec.Name, func(t *testing.T) {
			var examples []labelExample
			where := ""
			if spec.Scope == scopeTemplate {
				where = "template"
			}
			for _, v := range spec.Valid {
				ex := run(spec, v, where)
				if len(ex.Errors) > 0 {
					t.Errorf("valid example %q failed: %q", v, ex.Errors)
				}
				if len(ex.Changes) == 0 && !isNoOp(spec, v) && spec.Scope != scopeTemplate && !spec.Sidecar {
					t.Errorf("valid example %q changes nothing", v)
				}
				examples = append(examples, ex)
			}
			for _, v := range spec.Invalid {
				ex := run(spec, v, where)
				if len(ex.Errors) == 0 {
					t.Errorf("invalid example %q was accepted", v)
				}
				examples = append(examples, ex)
			}
			if spec.Scope == scopeNodeGroup {
				examples = append(examples, run(spec, spec.Valid[0], "node group"), run(spec, spec.Invalid[0], "node group"))
			}
			out, err := yaml.Marshal(map[string]any{"label": spec.Name, "examples": examples})
			if err != nil {
				t.Fatal(err)
			}
			assertGolden(t, filepath.Join("testdata", "labels", spec.Name+".golden.yaml"), out)
		})
	}
}

// isNoOp reports an example that asks for what happens anyway: the default,
// or a zero (boot_volume_size 0 is the flavor's disk, as when unset).
// patchChanges lists the post-renderer's patches in got that base has not.
func patchChanges(base, got []SpecPatch) []string {
	seen := map[string]bool{}
	for _, p := range base {
		seen[fmt.Sprint(p)] = true
	}
	var out []string
	for _, p := range got {
		if !seen[fmt.Sprint(p)] {
			out = append(out, fmt.Sprintf("post-render %s/%s %s spec: %s", p.Group, p.Version, p.Kind, compact(p.Spec)))
		}
	}
	return out
}

func isNoOp(spec *labelSpec, raw string) bool {
	value, _ := parseLabelValue(spec, raw)
	if spec.Default != "" {
		def, _ := parseLabelValue(spec, spec.Default)
		if fmt.Sprint(def) == fmt.Sprint(value) {
			return true
		}
	}
	return value == 0 || value == false
}
