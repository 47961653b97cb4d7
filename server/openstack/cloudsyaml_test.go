package openstack

import (
	"strings"
	"testing"
)

func TestCloudsYAMLLayout(t *testing.T) {
	got, err := cloudsYAML(clusterCloud{AuthURL: "https://keystone.example:5000/v3", Region: "RegionOne", Interface: "public", Verify: true}, "abc123", "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	// The StackHPC driver's layout, keys sorted as yaml.safe_dump writes.
	want := `clouds:
  openstack:
    auth:
      application_credential_id: abc123
      application_credential_secret: s3cr3t
      auth_url: https://keystone.example:5000/v3
    auth_type: v3applicationcredential
    identity_api_version: 3
    interface: public
    region_name: RegionOne
    verify: true
`
	if string(got) != want {
		t.Fatalf("clouds.yaml:\n%s\nwant:\n%s", got, want)
	}
	noRegion, err := cloudsYAML(clusterCloud{AuthURL: "http://k/v3", Interface: "internal"}, "id", "s")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(noRegion), "region_name") || !strings.Contains(string(noRegion), "verify: false") {
		t.Fatalf("without region, verify off:\n%s", noRegion)
	}
}

func TestCredentialIDFromClouds(t *testing.T) {
	ours, _ := cloudsYAML(clusterCloud{AuthURL: "http://k/v3", Interface: "public", Verify: true}, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "secret")
	tests := []struct {
		name, yaml, want, errHas string
	}{
		{name: "ours", yaml: string(ours), want: "0f1e2d3c4b5a69788796a5b4c3d2e1f0"},
		{name: "StackHPC driver's (flow style, extra keys)", yaml: `clouds:
  openstack:
    auth: {application_credential_id: 9c8b7a, application_credential_secret: x, auth_url: 'https://k:5000'}
    auth_type: v3applicationcredential
    identity_api_version: 3
    interface: public
    region_name: null
    verify: true
`, want: "9c8b7a"},
		{name: "empty", yaml: "  \n", errHas: "empty"},
		{name: "not yaml", yaml: "clouds: [\n", errHas: "not YAML"},
		{name: "other cloud", yaml: "clouds:\n  mycloud:\n    auth: {application_credential_id: x}\n", errHas: "no cloud named openstack"},
		{name: "password cloud", yaml: "clouds:\n  openstack:\n    auth: {username: u, password: p}\n", errHas: "no auth.application_credential_id"},
	}
	a := &Adapter{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.CredentialIDFromClouds([]byte(tt.yaml))
			if tt.errHas != "" {
				wantFailedPrecondition(t, err, tt.errHas, "p}")
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
