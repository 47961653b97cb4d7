package clusters

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestMatchMachine(t *testing.T) {
	machine := func(name, node, infra, providerID string, addrs ...clusterv1.MachineAddress) clusterv1.Machine {
		m := clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		m.Spec.InfrastructureRef.Name = infra
		m.Spec.ProviderID = providerID
		m.Status.Addresses = addrs
		if node != "" {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
		}
		return m
	}
	machines := []clusterv1.Machine{
		machine("md-a", "node-a", "osm-a", "openstack:///1111-aaaa",
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.0.0.11"}),
		machine("md-b", "", "osm-b", "",
			clusterv1.MachineAddress{Type: clusterv1.MachineExternalIP, Address: "203.0.113.7"},
			clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: "host-b"}),
	}
	for _, tc := range []struct {
		node, want string
	}{
		{"md-a", "md-a"},                    // Machine name
		{"node-a", "md-a"},                  // Node name
		{"osm-a", "md-a"},                   // OpenStackMachine name
		{"1111-aaaa", "md-a"},               // Nova server id from providerID
		{"10.0.0.11", "md-a"},               // internal address (Magnum's node_addresses)
		{"203.0.113.7", "md-b"},             // external address
		{"md-b", "md-b"},                    // no node yet: the Machine's own name
		{"host-b", ""},                      // host names are not addresses Magnum shows
		{"10.0.0.12", ""},                   // unknown address
		{"", ""},                            // nothing
		{string(corev1.NodeInternalIP), ""}, // an address type is not an address
	} {
		if got := matchMachine(machines, tc.node); got != tc.want {
			t.Errorf("matchMachine(%q) = %q, want %q", tc.node, got, tc.want)
		}
	}
}
