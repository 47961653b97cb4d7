package config

import (
	"reflect"
	"strings"
)

// EnvPrefix starts every environment variable the sidecar reads.
const EnvPrefix = "MAGNUM_CAPI"

// Option is one configuration option, as docs/configuration.md lists it.
type Option struct {
	// Key is the option's name in the file: dotted for nested sections,
	// "list[].field" for fields of list entries.
	Key string
	// Env is the environment variable that overrides it; empty for fields
	// of list entries (environment variables cannot index a list).
	Env string
	// Type is the Go type the value decodes into.
	Type string
}

// Options lists every option of Config, derived from its mapstructure tags,
// so the documentation test and the environment binding cannot miss one.
func Options() []Option {
	var out []Option
	walk(reflect.TypeFor[Config](), "", false, &out)
	return out
}

func walk(t reflect.Type, prefix string, inList bool, out *[]Option) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("mapstructure"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type.String() != "time.Duration":
			walk(f.Type, key+".", inList, out)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			*out = append(*out, Option{Key: key, Type: "list"})
			walk(f.Type.Elem(), key+"[].", true, out)
		default:
			o := Option{Key: key, Type: f.Type.String()}
			// Environment variables cannot index a list entry nor name
			// a map's keys: those options are set in the file.
			if !inList && f.Type.Kind() != reflect.Map {
				o.Env = EnvName(key)
			}
			*out = append(*out, o)
		}
	}
}

// EnvName is the environment variable for a key: the prefix, then the key
// upper-cased with dots as underscores (log.level -> MAGNUM_CAPI_LOG_LEVEL,
// tls.certFile -> MAGNUM_CAPI_TLS_CERTFILE).
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}
