package helmvalues

import (
	"fmt"
	"reflect"
)

// asValuesFile gives the values the types a values file gives them: Helm's
// CLI and the chart's own values.yaml decode every number as float64 and
// every list as []any, and the openstack-cluster chart's templates rely on
// it (machine-deployment.yaml compares `lt $machineCountMin 0.0`, which Go
// templates refuse for an int: "incompatible types for comparison"). The
// Helm SDK passes the values it is given as they are, so Go ints built here
// would reach the templates as ints.
func asValuesFile(node any) any {
	switch v := node.(type) {
	case nil, string, bool, float64:
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			out[k] = asValuesFile(item)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = asValuesFile(item)
		}
		return out
	case []string:
		return stringsToAny(v)
	}
	rv := reflect.ValueOf(node)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint())
	case reflect.Float32:
		return rv.Float()
	case reflect.Slice:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = asValuesFile(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		for _, key := range rv.MapKeys() {
			out[fmt.Sprint(key.Interface())] = asValuesFile(rv.MapIndex(key).Interface())
		}
		return out
	}
	// Nothing else is ever put into the values (put's callers are this
	// package's own); a new type shows up here as its text, never a panic.
	return fmt.Sprint(node)
}
