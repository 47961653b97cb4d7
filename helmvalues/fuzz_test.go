package helmvalues

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzLabelParsers feeds arbitrary text to every label's parser. A parser
// never panics, is deterministic, accepts or refuses (never both), never
// accepts template syntax or control characters, and parses its own
// normalized output to the same value.
func FuzzLabelParsers(f *testing.F) {
	for i, spec := range labelSpecs {
		for _, v := range append(append([]string{spec.Default}, spec.Valid...), spec.Invalid...) {
			f.Add(uint8(i), v)
		}
	}
	f.Add(uint8(0), "{{")
	f.Add(uint8(3), "a\x00b")
	f.Add(uint8(7), strings.Repeat("x,", 100))
	f.Fuzz(func(t *testing.T, index uint8, raw string) {
		spec := &labelSpecs[int(index)%len(labelSpecs)]
		value, expected := parseLabelValue(spec, raw)
		again, expectedAgain := parseLabelValue(spec, raw)
		if fmt.Sprint(value) != fmt.Sprint(again) || expected != expectedAgain {
			t.Fatalf("%s: %q parsed differently twice", spec.Name, raw)
		}
		if (value == nil) == (expected == "") {
			t.Fatalf("%s: %q gave value %v and expected %q", spec.Name, raw, value, expected)
		}
		if value == nil {
			return
		}
		var canonical string
		switch v := value.(type) {
		case string:
			canonical = v
		case []string:
			canonical = strings.Join(v, map[bool]string{true: " ", false: ","}[strings.HasPrefix(spec.Type.Doc, "space")])
		case bool, int:
			canonical = fmt.Sprint(v)
		case map[string]string:
			var parts []string
			for _, k := range sortedKeys(v) {
				parts = append(parts, k+"="+v[k])
			}
			canonical = strings.Join(parts, ",")
		case []securityGroupRule:
			parts := make([]string, len(v))
			for i, r := range v {
				parts[i] = r.String()
			}
			canonical = strings.Join(parts, ",")
		case []Taint:
			parts := make([]string, len(v))
			for i, t := range v {
				parts[i] = t.Key + "=" + t.Value + ":" + t.Effect
			}
			canonical = strings.Join(parts, ",")
		default:
			t.Fatalf("%s: %q parsed to a %T", spec.Name, raw, value)
		}
		if hasTemplateDelimiters(canonical) || hasControl(canonical) {
			t.Fatalf("%s: accepted %q as %q", spec.Name, raw, canonical)
		}
		reparsed, msg := parseLabelValue(spec, canonical)
		if msg != "" || !reflect.DeepEqual(reparsed, value) {
			t.Fatalf("%s: %q → %q does not parse back (%v, %s)", spec.Name, raw, canonical, reparsed, msg)
		}
	})
}

// FuzzBuild drives the whole mapping: arbitrary JSON documents, and the
// minimal cluster with fuzzed labels, names, counts and fields. Build never
// panics; it either fails with typed errors only, or returns values that are
// deterministic, free of template syntax, use only chart 0.27 keys, carry
// valid kubeadm fragments and valid node group names.
func FuzzBuild(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "build", "*.json"))
	for _, path := range inputs {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "", "", "default-worker", 2, 0, 0, uint16(0))
	}
	for i, spec := range labelSpecs {
		f.Add([]byte(nil), spec.Name, spec.Valid[0], "default-worker", 3, 1, 5, uint16(i)<<1|1)
		f.Add([]byte(nil), spec.Name, spec.Invalid[0], "GPU Workers", 1, 0, 2, uint16(i))
	}
	f.Add([]byte(nil), "availability_zone", "yes", strings.Repeat("long-name-", 10), 0, 0, 0, uint16(0xffff))
	f.Add([]byte(nil), "boot_volume_size", "10", "control-plane", -1, -5, 1001, uint16(0x2aa))
	f.Add([]byte("{"), "", "", "", 0, 0, 0, uint16(0))

	base := minimalInput(f)
	cfg := DefaultConfig()
	cfg.KeystoneAuthURL = "https://keystone.example.com/v3"
	f.Fuzz(func(t *testing.T, data []byte, key, value, ngName string, nodeCount, minCount, maxCount int, flags uint16) {
		if len(data) > 0 {
			in, err := ParseInput(data)
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("ParseInput error is not a FieldError: %v", err)
				}
				return
			}
			checkBuild(t, in, cfg)
			return
		}
		in := cloneInput(base)
		in.Cluster.Labels = map[string]string{key: value}
		worker := &in.NodeGroups[1]
		worker.Name, worker.NodeCount = ngName, nodeCount
		worker.MinNodeCount, worker.MaxNodeCount = &minCount, &maxCount
		if flags&1 != 0 {
			in.Cluster.Labels["auto_scaling_enabled"] = "true"
		}
		if flags&2 != 0 {
			worker.Labels = map[string]string{key: value, "availability_zone": value}
		}
		if flags&4 != 0 {
			in.Cluster.Keypair = value
		}
		if flags&8 != 0 {
			worker.FlavorID = value
		}
		if flags&16 != 0 {
			in.VolumeTypes = append(in.VolumeTypes, VolumeType{ID: "c1d2e3f4-0000-4000-8000-00000000000f", Name: value})
		}
		if flags&32 != 0 {
			worker.NodeLabels = map[string]string{key: value}
			worker.NodeTaints = []Taint{{Key: key, Value: value, Effect: ngName}}
		}
		if flags&64 != 0 {
			in.ClusterTemplate.HTTPProxy, in.ClusterTemplate.NoProxy = value, key
		}
		if flags&128 != 0 {
			in.ClusterTemplate.NetworkDriver = value
		}
		if flags&256 != 0 {
			in.Cluster.StackID = key
		}
		if flags&512 != 0 {
			in.NodeGroups = append(in.NodeGroups, NodeGroup{Name: value, Role: key, NodeCount: minCount, FlavorID: "m1.small"})
		}
		if flags&1024 != 0 {
			in.ClusterTemplate.DNSNameserver, in.ExternalNetworkID, in.Image.KubeVersion = value, key, ngName
		}
		checkBuild(t, in, cfg)
	})
}

func cloneInput(in Input) Input {
	data, _ := yaml.Marshal(in)
	var out Input
	if err := yaml.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

func checkBuild(t *testing.T, in Input, cfg Config) {
	t.Helper()
	res, err := Build(in, cfg)
	if err != nil {
		for _, e := range unwrapAll(err) {
			var fe *FieldError
			var ce *ConfigError
			if !errors.As(e, &fe) && !errors.As(e, &ce) {
				t.Fatalf("untyped error: %v", e)
			}
		}
		if res.Values != nil {
			t.Fatal("values returned with an error")
		}
		return
	}
	first, err := yaml.Marshal(res.Values)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Build(in, cfg)
	second, _ := yaml.Marshal(again.Values)
	if !bytes.Equal(first, second) {
		t.Fatal("Build is not deterministic")
	}
	if p := findTemplateSyntax(res.Values, ""); p != "" {
		t.Fatalf("template syntax at %s", p)
	}
	if bad := unknownChartKeys(t, res.Values); len(bad) > 0 {
		t.Fatalf("unknown chart keys %q", bad)
	}
	assertKubeadmSchema(t, res.Values)
	release := in.Cluster.StackID
	groups, _ := res.Values["nodeGroups"].([]any)
	for _, g := range groups {
		name, _ := g.(map[string]any)["name"].(string)
		if !chartNodeGroupName.MatchString(name) || len(release)+1+len(name) > maxObjectName {
			t.Fatalf("node group name %q (release %q)", name, release)
		}
	}
}

func unwrapAll(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	return []error{err}
}
