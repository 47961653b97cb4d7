package openstackfake

import (
	"net/http"
)

// AddVolumeType registers a volume type.
func (s *Server) AddVolumeType(vt VolumeType) VolumeType {
	if vt.ID == "" {
		vt.ID = newUUID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumeTypes = append(s.volumeTypes, vt)
	return vt
}

func (s *Server) routeCinder(mux *http.ServeMux) {
	mux.HandleFunc("GET /volume/v3/{project}/types", s.listVolumeTypes)
	mux.HandleFunc("GET /volume/v3/{project}/types/{id}", s.showVolumeType)
}

// cinderProjectOK is Cinder's check that the project in the URL is the
// token's; a mismatch is "Malformed request url".
func cinderProjectOK(w http.ResponseWriter, r *http.Request) bool {
	tok := tokenFrom(r)
	if r.PathValue("project") == tok.ProjectID || tok.isAdmin() {
		return true
	}
	writeBody(w, http.StatusBadRequest, "application/json", fixture("cinder-400-project.json", nil))
	return false
}

func (s *Server) listVolumeTypes(w http.ResponseWriter, r *http.Request) {
	if !cinderProjectOK(w, r) {
		return
	}
	types := []any{}
	for _, m := range s.renderVolumeTypes(tokenFrom(r)) {
		types = append(types, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"volume_types": types})
}

// showVolumeType accepts an id or a name, as Cinder's show does.
func (s *Server) showVolumeType(w http.ResponseWriter, r *http.Request) {
	if !cinderProjectOK(w, r) {
		return
	}
	id := r.PathValue("id")
	for _, m := range s.renderVolumeTypes(tokenFrom(r)) {
		if m["id"] == id || m["name"] == id {
			writeJSON(w, http.StatusOK, map[string]any{"volume_type": m})
			return
		}
	}
	writeNotFound(w, VolumeService, "volume type", id)
}

// renderVolumeTypes: private types only for the admin (access lists are not
// modelled).
func (s *Server) renderVolumeTypes(tok Token) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, vt := range s.volumeTypes {
		if vt.Private && !tok.isAdmin() {
			continue
		}
		m := object("cinder-volume-type.json", nil)
		m["id"], m["name"], m["description"] = vt.ID, vt.Name, vt.Description
		m["is_public"], m["os-volume-type-access:is_public"] = !vt.Private, !vt.Private
		specs := map[string]any{}
		for k, v := range vt.ExtraSpecs {
			specs[k] = v
		}
		m["extra_specs"] = specs
		if vt.Description == "" {
			m["description"] = nil
		}
		out = append(out, m)
	}
	return out
}
