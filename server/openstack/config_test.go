package openstack

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
)

func TestLoadServiceCloud(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	password := write("password.yaml", `clouds:
  magnum:
    auth:
      auth_url: https://keystone.example:5000/v3
      username: magnum
      password: hunter2
      user_domain_name: Default
      project_name: service
      project_domain_name: Default
    region_name: RegionOne
    interface: internal
`)
	appcred := write("appcred.yaml", `clouds:
  magnum:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://keystone.example:5000
      application_credential_id: 21f0
      application_credential_secret: hunter2
`)
	tests := []struct {
		name, file, cloud string
		want              gophercloud.AuthOptions
		errHas            string
	}{
		{name: "password, project by name", file: password, cloud: "magnum", want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example:5000/v3", Username: "magnum", Password: "hunter2", DomainName: "Default",
			Scope: &gophercloud.AuthScope{ProjectName: "service", DomainName: "Default"}, AllowReauth: true,
		}},
		{name: "application credential", file: appcred, cloud: "magnum", want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example:5000", ApplicationCredentialID: "21f0", ApplicationCredentialSecret: "hunter2", AllowReauth: true,
		}},
		{name: "missing file", file: filepath.Join(dir, "nope.yaml"), cloud: "magnum", errHas: "openstack.cloudsFile"},
		{name: "unknown cloud", file: password, cloud: "other", errHas: `openstack.cloud "other": no such cloud`},
		{name: "no auth_url", file: write("nourl.yaml", "clouds:\n  magnum:\n    auth: {username: u, password: hunter2}\n"), cloud: "magnum", errHas: "no auth.auth_url"},
		{name: "no secret", file: write("nosecret.yaml", "clouds:\n  magnum:\n    auth: {auth_url: 'http://k/v3', username: u}\n"), cloud: "magnum", errHas: "neither a password"},
		{name: "unsupported auth type", file: write("token.yaml", "clouds:\n  magnum:\n    auth_type: v3oidcpassword\n    auth: {auth_url: 'http://k/v3', password: hunter2}\n"), cloud: "magnum", errHas: "not supported"},
		{name: "not yaml", file: write("bad.yaml", "clouds: [password: hunter2\n"), cloud: "magnum", errHas: "not a clouds.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadServiceCloud(tt.file, tt.cloud)
			if tt.errHas != "" {
				wantFailedPrecondition(t, err, tt.errHas, "hunter2")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.auth
			if got.IdentityEndpoint != tt.want.IdentityEndpoint || got.Username != tt.want.Username || got.Password != tt.want.Password ||
				got.DomainName != tt.want.DomainName || got.ApplicationCredentialID != tt.want.ApplicationCredentialID ||
				got.ApplicationCredentialSecret != tt.want.ApplicationCredentialSecret || got.AllowReauth != tt.want.AllowReauth ||
				(got.Scope == nil) != (tt.want.Scope == nil) || (got.Scope != nil && *got.Scope != *tt.want.Scope) {
				t.Fatalf("auth options = %+v (scope %+v), want %+v (scope %+v)", got, got.Scope, tt.want, tt.want.Scope)
			}
		})
	}
}

func TestNewChecksConfiguration(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	tests := []struct {
		name   string
		cfg    Config
		errHas string
	}{
		{"nothing configured is allowed", Config{}, ""},
		{"clouds file without cloud name", Config{CloudsFile: "/etc/magnum-capi/clouds.yaml"}, "openstack.cloud"},
		{"CA file without certificates", Config{CAFile: notPEM}, "openstack.caFile"},
		{"missing CA file", Config{CAFile: filepath.Join(dir, "none.pem")}, "openstack.caFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, quietLog())
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFailedPrecondition(t, err, tt.errHas, "")
		})
	}
}
