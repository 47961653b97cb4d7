package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/viper"
)

// fromYAML decodes data as serve decodes its configuration file (defaults,
// then the file, exact decoding), without a file on disk.
func fromYAML(data []byte) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return Config{}, err
	}
	return read("", v)
}

// FuzzConfig feeds arbitrary configuration files to the decoder and the
// validation serve runs at start. Neither panics; every validation problem
// is an OptionError naming an option of the configuration; and a file that
// passes is written back by YAML (how the test stack writes each sidecar's
// file) and read again to the same configuration.
func FuzzConfig(f *testing.F) {
	seeds, _ := filepath.Glob("../../deploy/config/*.yaml")
	seeds = append(seeds, "../../deploy/kolla-ansible/config/magnum-capi.yaml")
	for _, path := range seeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("listen: 127.0.0.1:9000\ntls:\n  certFile: /nonexistent\n"))
	f.Add([]byte("managementClusters:\n  - name: a\n    kubeconfig: /nonexistent\n    qps: -1\n    requestTimeout: 1h\n"))
	f.Add([]byte("values:\n  labelDefaults:\n    boot_volume_size: \"10\"\n  registryMirrors:\n    - registry: docker.io\n      mirrors: [https://m]\n"))
	f.Add([]byte("timeouts:\n  update: 3x\nlog:\n  level: loud\n  file: relative.log\n"))
	f.Add([]byte("chart: [1, 2]\n"))
	known := map[string]bool{}
	for _, o := range Options() {
		known[strings.SplitN(o.Key, "[]", 2)[0]] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Validation reads the files options name: never device or
		// kernel files the fuzzer might spell.
		if bytes.Contains(data, []byte("/dev")) || bytes.Contains(data, []byte("/proc")) || bytes.Contains(data, []byte("/sys")) {
			return
		}
		c, err := fromYAML(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			checkOptionErrors(t, err, known)
			return
		}
		out, err := YAML(c)
		if err != nil {
			t.Fatalf("YAML of a valid configuration: %v", err)
		}
		back, err := fromYAML(out)
		if err != nil {
			t.Fatalf("the file YAML wrote does not decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalized(back), normalized(c)) {
			t.Fatalf("YAML round trip changed the configuration:\n%+v\n%+v\n%s", c, back, out)
		}
	})
}

// checkOptionErrors fails unless every error joined in err is an
// OptionError whose option is (under) a known option key.
func checkOptionErrors(t *testing.T, err error, known map[string]bool) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var oe *OptionError
		if !errors.As(e, &oe) {
			t.Fatalf("validation problem %T %v is not an OptionError", e, e)
		}
		name := oe.Option
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		for !known[name] && strings.Contains(name, ".") {
			name = name[:strings.LastIndexByte(name, '.')]
		}
		if !known[name] {
			t.Fatalf("validation problem names %q, which is no option: %v", oe.Option, e)
		}
	}
}

// normalized makes empty and nil lists and maps compare equal: the file
// cannot tell them apart.
func normalized(c Config) Config {
	v := reflect.ValueOf(&c).Elem()
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Map:
			if v.Len() == 0 && v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
				return
			}
			if v.Kind() == reflect.Slice {
				for i := range v.Len() {
					walk(v.Index(i))
				}
			}
		}
	}
	walk(v)
	return c
}
