package openstackfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// ServerGroup is a Nova server group; server groups belong to projects.
type ServerGroup struct {
	ID        string // random UUID when empty
	Name      string
	Policy    string // affinity, anti-affinity, soft-affinity, soft-anti-affinity
	ProjectID string
	UserID    string
	Members   []string
}

// AddServerGroup registers a server group.
func (s *Server) AddServerGroup(g ServerGroup) ServerGroup {
	if g.ID == "" {
		g.ID = newUUID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverGroups = append(s.serverGroups, g)
	return g
}

// ServerGroups are a project's server groups, in creation order.
func (s *Server) ServerGroups(projectID string) []ServerGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ServerGroup
	for _, g := range s.serverGroups {
		if g.ProjectID == projectID {
			out = append(out, g)
		}
	}
	return out
}

// SetServerGroupQuota limits how many server groups a project may have, as
// Nova's server_groups quota does (Nova's default is 10); 0 is no limit.
func (s *Server) SetServerGroupQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverGroupQuota = n
}

func (s *Server) routeServerGroups(mux *http.ServeMux) {
	mux.HandleFunc("GET /compute/v2.1/os-server-groups", s.listServerGroups)
	mux.HandleFunc("POST /compute/v2.1/os-server-groups", s.createServerGroup)
	mux.HandleFunc("GET /compute/v2.1/os-server-groups/{id}", s.showServerGroup)
	mux.HandleFunc("DELETE /compute/v2.1/os-server-groups/{id}", s.deleteServerGroup)
}

// novaMicroversion is the request's compute microversion, as major and
// minor; 2.1 when the request names none.
func novaMicroversion(r *http.Request) (int, int) {
	v := r.Header.Get("X-OpenStack-Nova-API-Version")
	if h := r.Header.Get("OpenStack-API-Version"); strings.HasPrefix(h, "compute ") {
		v = strings.TrimPrefix(h, "compute ")
	}
	major, minor, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return 2, 1
	}
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return 2, 1
	}
	return ma, mi
}

// atLeast says whether the request's microversion is 2.minor or newer.
func atLeast(r *http.Request, minor int) bool {
	ma, mi := novaMicroversion(r)
	return ma > 2 || (ma == 2 && mi >= minor)
}

// renderServerGroup fills Nova's recorded object with a group, in the shape
// of the request's microversion (2.64 replaced `policies` with `policy` and
// `rules`).
func renderServerGroup(r *http.Request, g ServerGroup) map[string]any {
	m := object("nova-server-group.json", map[string]string{"id": g.ID, "name": "", "project_id": g.ProjectID, "user_id": g.UserID})["server_group"].(map[string]any)
	m["name"] = g.Name
	members := []any{}
	for _, id := range g.Members {
		members = append(members, id)
	}
	m["members"] = members
	if atLeast(r, 64) {
		delete(m, "policies")
		delete(m, "metadata")
		m["policy"], m["rules"] = g.Policy, map[string]any{}
	} else {
		m["policies"] = []any{g.Policy}
	}
	if !atLeast(r, 13) {
		delete(m, "project_id")
		delete(m, "user_id")
	}
	return m
}

func (s *Server) listServerGroups(w http.ResponseWriter, r *http.Request) {
	groups := []any{}
	for _, g := range s.ServerGroups(tokenFrom(r).ProjectID) {
		groups = append(groups, renderServerGroup(r, g))
	}
	writeJSON(w, http.StatusOK, map[string]any{"server_groups": groups})
}

func (s *Server) findServerGroup(r *http.Request) (ServerGroup, bool) {
	project, id := tokenFrom(r).ProjectID, r.PathValue("id")
	for _, g := range s.ServerGroups(project) {
		if g.ID == id {
			return g, true
		}
	}
	return ServerGroup{}, false
}

func (s *Server) showServerGroup(w http.ResponseWriter, r *http.Request) {
	g, ok := s.findServerGroup(r)
	if !ok {
		writeNovaError(w, http.StatusNotFound, "itemNotFound", "Instance group "+r.PathValue("id")+" could not be found.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server_group": renderServerGroup(r, g)})
}

// serverGroupPolicies are the policies Nova accepts at a microversion: the
// soft ones from 2.15.
func serverGroupPolicies(r *http.Request) []string {
	if atLeast(r, 15) {
		return []string{"anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity"}
	}
	return []string{"anti-affinity", "affinity"}
}

// createServerGroup validates as Nova's schema does (a name of 1 to 255
// characters, exactly one known policy), then checks the project's quota.
func (s *Server) createServerGroup(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ServerGroup struct {
			Name     string   `json:"name"`
			Policies []string `json:"policies"`
			Policy   string   `json:"policy"`
		} `json:"server_group"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Malformed request body")
		return
	}
	req := body.ServerGroup
	policy := req.Policy
	if !atLeast(r, 64) {
		if len(req.Policies) != 1 {
			writeNovaError(w, http.StatusBadRequest, "badRequest", "Invalid input for field/attribute policies. Value: "+strings.Join(req.Policies, ",")+". exactly one policy is required")
			return
		}
		policy = req.Policies[0]
	}
	allowed := serverGroupPolicies(r)
	if !contains(allowed, policy) {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Invalid input for field/attribute 0. Value: "+policy+". '"+policy+"' is not one of ['"+strings.Join(allowed, "', '")+"']")
		return
	}
	if n := len(req.Name); n == 0 || n > 255 || strings.TrimSpace(req.Name) != req.Name {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Invalid input for field/attribute name. Value: "+req.Name+".")
		return
	}
	tok := tokenFrom(r)
	s.mu.Lock()
	quota, used := s.serverGroupQuota, 0
	for _, g := range s.serverGroups {
		if g.ProjectID == tok.ProjectID {
			used++
		}
	}
	s.mu.Unlock()
	if quota > 0 && used >= quota {
		writeBody(w, http.StatusForbidden, "application/json", fixture("nova-403-quota-server-groups.json", nil))
		return
	}
	g := s.AddServerGroup(ServerGroup{Name: req.Name, Policy: policy, ProjectID: tok.ProjectID, UserID: tok.UserID})
	writeJSON(w, http.StatusOK, map[string]any{"server_group": renderServerGroup(r, g)})
}

func (s *Server) deleteServerGroup(w http.ResponseWriter, r *http.Request) {
	project, id := tokenFrom(r).ProjectID, r.PathValue("id")
	s.mu.Lock()
	for i, g := range s.serverGroups {
		if g.ProjectID == project && g.ID == id {
			s.serverGroups = append(s.serverGroups[:i], s.serverGroups[i+1:]...)
			s.mu.Unlock()
			w.Header().Set("X-Openstack-Request-Id", "req-"+newUUID())
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	s.mu.Unlock()
	writeNovaError(w, http.StatusNotFound, "itemNotFound", "Instance group "+id+" could not be found.")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
