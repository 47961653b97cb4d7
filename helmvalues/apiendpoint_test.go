package helmvalues

import (
	"reflect"
	"strings"
	"testing"
)

func TestAPIEndpointChanges(t *testing.T) {
	values := map[string]any{"apiServer": map[string]any{"floatingIP": "203.0.113.10", "fixedIP": "10.0.0.250"}}
	osc := map[string]any{"apiServerLoadBalancer": map[string]any{"enabled": true, "flavor": "amphora", "availabilityZone": "az-1"}}
	deployed := DeployedAPIEndpoint(values, osc)
	if want := (APIEndpoint{FloatingIP: "203.0.113.10", FixedIP: "10.0.0.250", LBFlavor: "amphora", LBAvailabilityZone: "az-1"}); deployed != want {
		t.Fatalf("DeployedAPIEndpoint = %+v, want %+v", deployed, want)
	}
	tests := []struct {
		name      string
		deployed  APIEndpoint
		requested APIEndpoint
		want      []EndpointChange
		wantText  []string
	}{
		{name: "the same", deployed: deployed, requested: deployed},
		{name: "nothing deployed, nothing asked", deployed: DeployedAPIEndpoint(nil, nil)},
		{
			name: "flavor changed, zone dropped", deployed: deployed,
			requested: APIEndpoint{FloatingIP: "203.0.113.10", FixedIP: "10.0.0.250", LBFlavor: "amphora-ha"},
			want:      []EndpointChange{{"api_server_lb_flavor", "amphora", "amphora-ha"}, {"api_server_lb_availability_zone", "az-1", ""}},
			wantText: []string{`label api_server_lb_flavor: the cluster was created with "amphora", and this asks for "amphora-ha"`,
				`label api_server_lb_availability_zone: the cluster was created with "az-1", and this asks for it unset`},
		},
		{
			name: "floating IP and VIP added", requested: APIEndpoint{FloatingIP: "203.0.113.11", FixedIP: "10.0.0.5"},
			want:     []EndpointChange{{"api_server_floating_ip", "", "203.0.113.11"}, {"api_server_fixed_ip", "", "10.0.0.5"}},
			wantText: []string{`label api_server_floating_ip: the cluster was created with it unset, and this asks for "203.0.113.11"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.deployed.Changes(tt.requested)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Changes = %+v, want %+v", got, tt.want)
			}
			var text []string
			for _, c := range got {
				text = append(text, c.String())
			}
			for _, w := range tt.wantText {
				if !strings.Contains(strings.Join(text, "\n"), w) {
					t.Errorf("changes say %q, want %q among them", text, w)
				}
			}
		})
	}
}

func TestCertificatesExpiryPatches(t *testing.T) {
	if p := CertificatesExpiryPatches(0); p != nil {
		t.Errorf("CertificatesExpiryPatches(0) = %v, want none", p)
	}
	p := CertificatesExpiryPatches(DefaultCertificatesExpiryDays)
	if len(p) != 2 || p[0].Version != "v1beta1" || p[1].Version != "v1beta2" {
		t.Fatalf("CertificatesExpiryPatches(21) = %v, want a v1beta1 and a v1beta2 patch", p)
	}
	if got, _ := lookup(p[0].Spec, "rolloutBefore", "certificatesExpiryDays"); got != 21 {
		t.Errorf("v1beta1 rolloutBefore.certificatesExpiryDays = %v, want 21", got)
	}
	if got, _ := lookup(p[1].Spec, "rollout", "before", "certificatesExpiryDays"); got != 21 {
		t.Errorf("v1beta2 rollout.before.certificatesExpiryDays = %v, want 21", got)
	}
}
