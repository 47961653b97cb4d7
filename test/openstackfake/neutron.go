package openstackfake

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// AddNetwork registers a network and returns it with defaults filled in.
func (s *Server) AddNetwork(n Network) Network {
	if n.ID == "" {
		n.ID = newUUID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.networks = append(s.networks, n)
	return n
}

// AddSubnet registers a subnet of a registered network.
func (s *Server) AddSubnet(sn Subnet) Subnet {
	if sn.ID == "" {
		sn.ID = newUUID()
	}
	if sn.CIDR == "" {
		sn.CIDR = "10.0.0.0/24"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subnets = append(s.subnets, sn)
	return sn
}

func (s *Server) routeNeutron(mux *http.ServeMux) {
	// Neutron's root answers with or without the slash (openstacksdk asks
	// without it, and falls back to the catalog URL unversioned when it
	// cannot read the versions).
	versions := func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, http.StatusOK, "application/json", fixture("neutron-versions.json", map[string]string{"base": s.URL + "/networking"}))
	}
	mux.HandleFunc("GET /networking/{$}", versions)
	mux.HandleFunc("GET /networking", versions)
	mux.HandleFunc("GET /networking/v2.0/networks", s.neutronList("networks", s.renderNetworks))
	mux.HandleFunc("GET /networking/v2.0/networks/{id}", s.neutronShow("network", s.renderNetworks))
	mux.HandleFunc("GET /networking/v2.0/subnets", s.neutronList("subnets", s.renderSubnets))
	mux.HandleFunc("GET /networking/v2.0/subnets/{id}", s.neutronShow("subnet", s.renderSubnets))
	mux.HandleFunc("GET /networking/v2.0/floatingips", s.neutronList("floatingips", s.renderFloatingIPs))
	mux.HandleFunc("GET /networking/v2.0/floatingips/{id}", s.neutronShow("floatingip", s.renderFloatingIPs))
}

// neutronList answers a collection with Neutron's filters: every query
// parameter that is not a paging or field selector must equal the field
// (repeated parameters are alternatives).
func (s *Server) neutronList(collection string, render func(Token) []map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		items := []any{}
		for _, m := range render(tokenFrom(r)) {
			if neutronMatches(m, r.URL.Query()) {
				items = append(items, m)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{collection: items})
	}
}

func (s *Server) neutronShow(kind string, render func(Token) []map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		for _, m := range render(tokenFrom(r)) {
			if m["id"] == id {
				writeJSON(w, http.StatusOK, map[string]any{kind: m})
				return
			}
		}
		writeNotFound(w, NetworkService, kind, id)
	}
}

var neutronNonFilters = map[string]bool{"fields": true, "limit": true, "marker": true, "sort_key": true, "sort_dir": true, "page_reverse": true}

func neutronMatches(m map[string]any, q url.Values) bool {
	for key, wanted := range q {
		if neutronNonFilters[key] {
			continue
		}
		got, ok := m[key]
		if !ok {
			return false
		}
		match := false
		for _, w := range wanted {
			if strings.EqualFold(fmt.Sprint(got), w) {
				match = true
			}
		}
		if !match {
			return false
		}
	}
	return true
}

// renderNetworks is what the token may see: its project's networks, shared
// and external ones; the provider attributes are admin-only.
func (s *Server) renderNetworks(tok Token) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, n := range s.networks {
		if !tok.isAdmin() && n.ProjectID != tok.ProjectID && !n.Shared && !n.External {
			continue
		}
		m := object("neutron-network.json", nil)
		m["id"], m["name"] = n.ID, n.Name
		m["project_id"], m["tenant_id"] = n.ProjectID, n.ProjectID
		m["router:external"], m["shared"] = n.External, n.Shared
		subnets := []any{}
		for _, sn := range s.subnets {
			if sn.NetworkID == n.ID {
				subnets = append(subnets, sn.ID)
			}
		}
		m["subnets"] = subnets
		if !n.External {
			m["provider:network_type"], m["provider:physical_network"], m["provider:segmentation_id"] = "geneve", nil, 1042
		}
		if !tok.isAdmin() {
			for k := range m {
				if strings.HasPrefix(k, "provider:") {
					delete(m, k)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// renderSubnets is what the token may see: its project's subnets and those
// of shared networks.
func (s *Server) renderSubnets(tok Token) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	shared := map[string]bool{}
	for _, n := range s.networks {
		shared[n.ID] = n.Shared
	}
	var out []map[string]any
	for _, sn := range s.subnets {
		if !tok.isAdmin() && sn.ProjectID != tok.ProjectID && !shared[sn.NetworkID] {
			continue
		}
		m := object("neutron-subnet.json", nil)
		m["id"], m["name"], m["network_id"] = sn.ID, sn.Name, sn.NetworkID
		m["project_id"], m["tenant_id"], m["cidr"] = sn.ProjectID, sn.ProjectID, sn.CIDR
		if gw, first, last, ok := ipv4Pool(sn.CIDR); ok {
			m["gateway_ip"] = gw
			m["allocation_pools"] = []any{map[string]any{"start": first, "end": last}}
		}
		out = append(out, m)
	}
	return out
}

// ipv4Pool is Neutron's default for a subnet: the first address is the
// gateway, the pool runs from the next one to the last before broadcast.
func ipv4Pool(cidr string) (gateway, first, last string, ok bool) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Bits() > 29 {
		return "", "", "", false
	}
	p = p.Masked()
	gw := p.Addr().Next()
	a := p.Addr().As4()
	hostBits := 32 - p.Bits()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	bcast := n | (1<<hostBits - 1)
	end := netip.AddrFrom4([4]byte{byte(bcast >> 24), byte(bcast >> 16), byte(bcast >> 8), byte(bcast - 1)})
	return gw.String(), gw.Next().String(), end.String(), true
}
