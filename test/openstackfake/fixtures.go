package openstackfake

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

//go:embed testdata/*.json testdata/*.html
var testdata embed.FS

// fixture reads a testdata file with its {placeholders} filled in.
func fixture(name string, vars map[string]string) []byte {
	b, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("openstackfake: fixture %s: %v", name, err)) // embedded: cannot be missing
	}
	s := string(b)
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return []byte(s)
}

// object decodes a one-object fixture into a fresh map, so each answer
// starts from every field the real service sends.
func object(name string, vars map[string]string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(fixture(name, vars), &m); err != nil {
		panic(fmt.Sprintf("openstackfake: fixture %s: %v", name, err))
	}
	return m
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(w, status, "application/json", b)
}

func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Openstack-Request-Id", "req-"+newUUID())
	w.WriteHeader(status)
	w.Write(body)
}

// writeNotFound answers 404 the way each service does.
func writeNotFound(w http.ResponseWriter, svc Service, kind, id string) {
	switch svc {
	case ImageService:
		writeBody(w, http.StatusNotFound, "text/html; charset=UTF-8", fixture("glance-404.html", map[string]string{"id": id}))
	case NetworkService:
		typ := strings.ToUpper(kind[:1]) + kind[1:]
		writeBody(w, http.StatusNotFound, "application/json", fixture("neutron-404.json", map[string]string{"type": typ, "Type": typ, "id": id}))
	case VolumeService:
		writeBody(w, http.StatusNotFound, "application/json", fixture("cinder-404.json", map[string]string{"id": id}))
	case ComputeService:
		writeBody(w, http.StatusNotFound, "application/json", fixture("nova-404.json", map[string]string{"id": id}))
	default:
		http.NotFound(w, nil)
	}
}

// writeFailure answers an injected failure: HAProxy's page for 503 (every
// backend down), the service's own 500 body otherwise.
func writeFailure(w http.ResponseWriter, svc Service, status int) {
	if status == http.StatusServiceUnavailable {
		writeBody(w, status, "text/html", fixture("haproxy-503.html", nil))
		return
	}
	switch svc {
	case ImageService:
		writeBody(w, status, "text/html; charset=UTF-8", fixture("glance-500.html", nil))
	case NetworkService:
		writeBody(w, status, "application/json", fixture("neutron-500.json", nil))
	case VolumeService:
		writeBody(w, status, "application/json", fixture("cinder-500.json", nil))
	case ComputeService:
		writeBody(w, status, "application/json", fixture("nova-500.json", nil))
	default:
		writeBody(w, status, "application/json", fixture("keystone-500.json", nil))
	}
}

// writeAuthError is keystonemiddleware's answer: 401 for a bad token, 503
// when Keystone cannot be asked.
func writeAuthError(w http.ResponseWriter, status int) {
	if status == http.StatusUnauthorized {
		w.Header().Set("Www-Authenticate", `Keystone uri="unknown"`)
		writeBody(w, status, "application/json", fixture("keystone-401.json", nil))
		return
	}
	writeBody(w, status, "text/html", fixture("haproxy-503.html", nil))
}
