package config

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/viper"
	"sigs.k8s.io/yaml"
)

// Default is the configuration when nothing sets an option: Defaults,
// decoded. It is not valid on its own (no management cluster).
func Default() Config {
	v := viper.New()
	for k, val := range Defaults() {
		v.SetDefault(k, val)
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		// Defaults is this package's own table; a mismatch is a bug here,
		// caught by TestDefaultDecodes, never bad input.
		panic(fmt.Sprintf("config: the defaults do not decode: %v", err))
	}
	return c
}

// YAML is the configuration file Load reads back as c: every option under
// its file key (Options), durations written as Go durations ("30s"). The
// test stack writes each sidecar's file from a typed Config with it.
func YAML(c Config) ([]byte, error) {
	return yaml.Marshal(fileValue(reflect.ValueOf(c)))
}

// fileValue is v as the file holds it: structs as maps keyed by their
// mapstructure tags, lists of structs as lists of such maps.
func fileValue(v reflect.Value) any {
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		return time.Duration(v.Int()).String()
	case v.Kind() == reflect.Struct:
		out := map[string]any{}
		for i := range v.NumField() {
			tag := strings.Split(v.Type().Field(i).Tag.Get("mapstructure"), ",")[0]
			if tag != "" && tag != "-" {
				out[tag] = fileValue(v.Field(i))
			}
		}
		return out
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		if v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = fileValue(v.Index(i))
		}
		return out
	}
	return v.Interface()
}
