package clusters

import (
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/server/openstack"
)

func TestFloatingIPProblem(t *testing.T) {
	const project, address = "8d9f6a1b2c3e4f5061728394a5b6c7d8", "203.0.113.10"
	tests := []struct {
		name  string
		fip   openstack.FloatingIP
		found bool
		want  []string // substrings of the error; none: no error
	}{
		{name: "free, of the project", fip: openstack.FloatingIP{ID: "f1", Address: address}, found: true},
		{name: "not in the project", want: []string{"labels.api_server_floating_ip", `"203.0.113.10"`,
			"no floating IP with this address in the cluster's project " + project}},
		{name: "attached to a server", fip: openstack.FloatingIP{ID: "f1", PortID: "p1", PortOwner: "compute:nova"}, found: true,
			want: []string{"labels.api_server_floating_ip", `"203.0.113.10"`, "attached to port p1 (compute:nova)", "expected a free floating IP"}},
		{name: "attached, owner unknown", fip: openstack.FloatingIP{ID: "f1", PortID: "p1"}, found: true,
			want: []string{"attached to port p1: detach it first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := floatingIPProblem(project, address, tt.fip, tt.found)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			var ia interface{ InvalidArgument() bool }
			if !errors.As(err, &ia) || !ia.InvalidArgument() {
				t.Fatalf("error %v, want InvalidArgument", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want it to say %q", err, w)
				}
			}
		})
	}
}
