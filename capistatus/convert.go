package capistatus

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
)

// fromUnstructured converts unstructured content into a typed object.
//
// The apimachinery converter is fast but its errors do not say where the
// problem is ("cannot convert int to string"); on failure the content is
// decoded again with encoding/json, whose errors name the field path
// ("spec.controlPlaneEndpoint.port of type int32"), so an operator can fix the
// object. The recover is a last guard so that no input, however malformed, can
// panic the sidecar.
func fromUnstructured(obj map[string]any, into any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot be read: %v", r)
		}
	}()
	if obj == nil {
		return errors.New("object is empty")
	}
	convErr := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
	if convErr == nil {
		return nil
	}
	if raw, err := json.Marshal(obj); err == nil {
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal(raw, into); errors.As(err, &typeErr) {
			return fmt.Errorf("%s: got a JSON %s, expected %s", typeErr.Field, typeErr.Value, kindName(typeErr.Type))
		} else if err != nil {
			return err
		}
	}
	return convErr
}

// kindName says what a Go type looks like in YAML, for error messages.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

func itoa(n int) string { return strconv.Itoa(n) }
