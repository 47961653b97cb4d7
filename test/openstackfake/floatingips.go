package openstackfake

// AddFloatingIP registers a floating IP and returns it with defaults
// filled in.
func (s *Server) AddFloatingIP(f FloatingIP) FloatingIP {
	if f.ID == "" {
		f.ID = newUUID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.floatingIPs = append(s.floatingIPs, f)
	return f
}

// renderFloatingIPs is what the token may see: its project's floating
// IPs (an admin sees every project's, as Neutron's policy lets it).
func (s *Server) renderFloatingIPs(tok Token) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, f := range s.floatingIPs {
		if !tok.isAdmin() && f.ProjectID != tok.ProjectID {
			continue
		}
		m := object("neutron-floatingip.json", nil)
		m["id"], m["floating_ip_address"] = f.ID, f.Address
		m["project_id"], m["tenant_id"] = f.ProjectID, f.ProjectID
		if f.PortID != "" {
			m["port_id"], m["fixed_ip_address"], m["status"] = f.PortID, "10.0.0.17", "ACTIVE"
			m["port_details"] = map[string]any{"name": "", "network_id": newUUID(), "mac_address": "fa:16:3e:b1:3b:30",
				"admin_state_up": true, "status": "ACTIVE", "device_id": newUUID(), "device_owner": f.PortOwner}
		}
		out = append(out, m)
	}
	return out
}

// AttachFloatingIP attaches the floating IP id to portID, a port of a
// device of owner (e.g. Octavia), as CAPO does for a cluster's load
// balancer; an empty portID detaches it.
func (s *Server) AttachFloatingIP(id, portID, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.floatingIPs {
		if s.floatingIPs[i].ID == id {
			s.floatingIPs[i].PortID, s.floatingIPs[i].PortOwner = portID, owner
		}
	}
}
