package helmvalues

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateConfig(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		field  string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"bad chart version", func(c *Config) { c.DefaultChartVersion = "v0.27" }, "chart.version"},
		{"keystone url without scheme", func(c *Config) { c.KeystoneAuthURL = "keystone:5000" }, "values.keystoneAuthURL"},
		{"default volume type with template syntax", func(c *Config) { c.CSICinderDefaultVolumeType = "{{x}}" }, "values.csiCinderDefaultVolumeType"},
		{"unknown label default", func(c *Config) { c.LabelDefaults = map[string]string{"nope": "1"} }, "values.labelDefaults.nope"},
		{"alias as label default", func(c *Config) { c.LabelDefaults = map[string]string{"etcd_volume_size": "1"} }, "values.labelDefaults.etcd_volume_size"},
		{"template-only label default", func(c *Config) { c.LabelDefaults = map[string]string{"capi_helm_chart_version": "0.27.0"} }, "values.labelDefaults.capi_helm_chart_version"},
		{"invalid label default", func(c *Config) { c.LabelDefaults = map[string]string{"boot_volume_size": "ten"} }, "values.labelDefaults.boot_volume_size"},
		{"label default with template syntax", func(c *Config) { c.LabelDefaults = map[string]string{"csi_cinder_fstype": "{{ x }}"} }, "values.labelDefaults.csi_cinder_fstype"},
		{"valid label default", func(c *Config) { c.LabelDefaults = map[string]string{"boot_volume_size": "30"} }, ""},
		{"mirror registry host", func(c *Config) { c.RegistryMirrors = map[string][]string{"Docker.IO": {"https://m.example.com/v2"}} }, "values.registryMirrors"},
		{"mirror url with a quote", func(c *Config) { c.RegistryMirrors = map[string][]string{"docker.io": {`https://m.example.com/v2"x`}} }, "values.registryMirrors.docker.io"},
		{"mirrored registry", func(c *Config) { c.MirroredRegistries = []string{"docker.io/library"} }, "values.mirroredRegistries"},
		{"trusted CA name", func(c *Config) {
			c.TrustedCAs = map[string]string{"My CA": "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"}
		}, "values.trustedCAs"},
		{"trusted CA content", func(c *Config) { c.TrustedCAs = map[string]string{"ca": "not a certificate"} }, "values.trustedCAs.ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.modify(&cfg)
			var p problems
			validateConfig(cfg, &p)
			err := p.err()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("valid configuration refused: %v", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("want a ConfigError on %s, got %v", tt.field, err)
			}
		})
	}
}

func TestDecodeInput(t *testing.T) {
	tests := []struct {
		name, doc, field string
	}{
		{"valid", `{"cluster": {"name": "x"}, "unknown_field": 1}`, ""},
		{"type error names the field", `{"nodegroups": [{"node_count": "3"}]}`, "nodegroups.node_count"},
		{"float count", `{"nodegroups": [{"node_count": 1.5}]}`, "nodegroups.node_count"},
		{"syntax error", `{"cluster": }`, "input"},
		{"truncated", `{"cluster": {`, "input"},
		{"empty", ``, "input"},
		{"trailing data", `{} {}`, "input"},
		{"not an object", `[1]`, "input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeInput(strings.NewReader(tt.doc))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("want a FieldError on %s, got %#v", tt.field, err)
			}
		})
	}
	if _, err := ParseInput(make([]byte, maxInputBytes+1)); err == nil {
		t.Error("an oversized input was accepted")
	}
}

func TestErrorMessages(t *testing.T) {
	fe := &FieldError{Field: "labels.boot_volume_size", Value: "big", Expected: "an integer"}
	if got := fe.Error(); got != `labels.boot_volume_size: invalid value "big": expected an integer` {
		t.Errorf("FieldError = %q", got)
	}
	ce := &ConfigError{Field: "values.keystoneAuthURL", Problem: "not configured"}
	if got := ce.Error(); got != "driver configuration values.keystoneAuthURL: not configured" {
		t.Errorf("ConfigError = %q", got)
	}
	joined := errors.Join(fe, ce)
	if got := OneLine(joined); got != fe.Error()+"; "+ce.Error() {
		t.Errorf("OneLine = %q", got)
	}
	if OneLine(nil) != "" {
		t.Error("OneLine(nil) is not empty")
	}
}
