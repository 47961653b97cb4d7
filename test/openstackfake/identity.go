package openstackfake

import (
	"net/http"
	"strings"
	"time"
)

// Keystone's answers for static-token mode: enough identity for a client
// that validates a token it already has (gophercloud's token pass-through)
// and reads the catalog from the answer.
func (s *Server) routeIdentity(mux *http.ServeMux) {
	mux.HandleFunc("GET /identity/v3", s.identityVersion)
	mux.HandleFunc("GET /identity/v3/{$}", s.identityVersion)
	mux.HandleFunc("GET /identity/v3/auth/tokens", s.validateToken)
}

func (s *Server) identityVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"version": map[string]any{
		"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
		"links":       []any{map[string]any{"rel": "self", "href": s.IdentityURL() + "/"}},
		"media-types": []any{map[string]any{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}},
	}})
}

// validateToken is GET /v3/auth/tokens: the X-Auth-Token was checked by the
// middleware; X-Subject-Token is the token to describe.
func (s *Server) validateToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	subject, ok := s.tokens[r.Header.Get("X-Subject-Token")]
	s.mu.Unlock()
	if !ok || time.Now().After(subject.ExpiresAt) {
		writeBody(w, http.StatusNotFound, "application/json", fixture("keystone-404-token.json", nil))
		return
	}
	body := object("keystone-token.json", nil)
	t := body["token"].(map[string]any)
	t["expires_at"] = subject.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	t["issued_at"] = subject.ExpiresAt.Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z")
	user := t["user"].(map[string]any)
	user["id"], user["name"] = subject.UserID, subject.UserName
	project := t["project"].(map[string]any)
	project["id"], project["name"] = subject.ProjectID, subject.ProjectName
	var roles []any
	for _, name := range subject.Roles {
		roles = append(roles, map[string]any{"id": name + "-role-id", "name": name})
	}
	t["roles"] = roles
	t["catalog"] = s.catalog(subject.ProjectID)
	w.Header().Set("X-Subject-Token", subject.ID)
	writeJSON(w, http.StatusOK, body)
}

// catalog is the fake's services as Keystone would list them for a token
// scoped to project.
func (s *Server) catalog(project string) []any {
	urls := s.Endpoints()
	urls[string(IdentityService)] = s.IdentityURL()
	var entries []any
	for _, typ := range []string{string(IdentityService), string(ImageService), string(NetworkService), string(VolumeService), string(ComputeService)} {
		url := strings.ReplaceAll(urls[typ], "%(project_id)s", project)
		var eps []any
		for _, iface := range []string{"public", "internal"} {
			eps = append(eps, map[string]any{
				"id": newUUID(), "interface": iface, "region_id": "RegionOne", "region": "RegionOne", "url": url,
			})
		}
		entries = append(entries, map[string]any{"endpoints": eps, "id": newUUID(), "type": typ, "name": typ})
	}
	return entries
}
