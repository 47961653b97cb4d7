package openstackfake

import (
	"net/http"
)

// AddFlavor registers a flavor.
func (s *Server) AddFlavor(f Flavor) Flavor {
	if f.ID == "" {
		f.ID = newUUID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flavors = append(s.flavors, f)
	return f
}

func (s *Server) routeNova(mux *http.ServeMux) {
	mux.HandleFunc("GET /compute/v2.1/flavors/detail", s.listFlavors)
	mux.HandleFunc("GET /compute/v2.1/flavors/{id}", s.showFlavor)
	mux.HandleFunc("GET /compute/v2.1/flavors/{id}/os-extra_specs", s.flavorExtraSpecs)
	// The version document novaclient and openstacksdk read first.
	version := func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, http.StatusOK, "application/json", fixture("nova-version-v2.1.json", map[string]string{"base": s.URL + "/compute/v2.1"}))
	}
	mux.HandleFunc("GET /compute/v2.1", version)
	mux.HandleFunc("GET /compute/v2.1/{$}", version)
}

// flavorExtraSpecs answers with the flavor's extra specs in the recorded
// envelope (Nova's {"extra_specs": {key: value}}, all strings).
func (s *Server) flavorExtraSpecs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, m := range s.renderFlavors(tokenFrom(r)) {
		if m["id"] == id {
			body := object("nova-flavor-extra-specs.json", nil)
			specs := map[string]any{}
			s.mu.Lock()
			for _, f := range s.flavors {
				if f.ID == id {
					for k, v := range f.ExtraSpecs {
						specs[k] = v
					}
				}
			}
			s.mu.Unlock()
			body["extra_specs"] = specs
			writeJSON(w, http.StatusOK, body)
			return
		}
	}
	writeNotFound(w, ComputeService, "flavor", id)
}

func (s *Server) listFlavors(w http.ResponseWriter, r *http.Request) {
	flavors := []any{}
	for _, m := range s.renderFlavors(tokenFrom(r)) {
		flavors = append(flavors, m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"flavors": flavors})
}

func (s *Server) showFlavor(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, m := range s.renderFlavors(tokenFrom(r)) {
		if m["id"] == id {
			writeJSON(w, http.StatusOK, map[string]any{"flavor": m})
			return
		}
	}
	writeNotFound(w, ComputeService, "flavor", id)
}

// renderFlavors: private flavors only for the admin (flavor access lists are
// not modelled).
func (s *Server) renderFlavors(tok Token) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := s.URL + "/compute"
	var out []map[string]any
	for _, f := range s.flavors {
		if f.Private && !tok.isAdmin() {
			continue
		}
		m := object("nova-flavor.json", nil)
		m["id"], m["name"] = f.ID, f.Name
		m["ram"], m["vcpus"], m["disk"] = f.RAM, f.VCPUs, f.Disk
		m["os-flavor-access:is_public"] = !f.Private
		m["links"] = []any{
			map[string]any{"rel": "self", "href": base + "/v2.1/flavors/" + f.ID},
			map[string]any{"rel": "bookmark", "href": base + "/flavors/" + f.ID},
		}
		out = append(out, m)
	}
	return out
}
