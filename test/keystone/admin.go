package keystone

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"sigs.k8s.io/yaml"
)

// Project is a Keystone project in the default domain.
type Project struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// User is a Keystone user in the default domain with a role on one project.
type User struct {
	ID          string `json:"user_id"`
	Name        string `json:"username"`
	Password    string `json:"password"`
	ProjectID   string `json:"project_id"`
	ProjectName string `json:"project_name"`
	Role        string `json:"role"`
}

// RegisterEndpoint adds a catalog service of the given type with public and
// internal endpoints at url in RegionOne. url may contain Keystone's
// %(project_id)s substitution (Cinder's endpoints do).
func (k *Keystone) RegisterEndpoint(ctx context.Context, serviceType, name, url string) error {
	_, err := k.registerEndpoint(ctx, serviceType, name, url)
	return err
}

// registerEndpoint is RegisterEndpoint, returning the service's id.
func (k *Keystone) registerEndpoint(ctx context.Context, serviceType, name, url string) (string, error) {
	svc, err := services.Create(ctx, k.admin, services.CreateOpts{Type: serviceType, Extra: map[string]any{"name": name}}).Extract()
	if err != nil {
		return "", fmt.Errorf("keystone: create service %s: %w", serviceType, err)
	}
	for _, iface := range []gophercloud.Availability{gophercloud.AvailabilityPublic, gophercloud.AvailabilityInternal} {
		_, err := endpoints.Create(ctx, k.admin, endpoints.CreateOpts{
			Availability: iface, Region: Region, URL: url, ServiceID: svc.ID,
		}).Extract()
		if err != nil {
			return svc.ID, fmt.Errorf("keystone: create %s endpoint for %s: %w", iface, serviceType, err)
		}
	}
	return svc.ID, nil
}

// RegisterEndpointsFor registers services as RegisterEndpoints does, for
// the life of a test that shares the Keystone with others: they are
// deleted (Keystone deletes their endpoints with them) when t ends, so the
// next test's catalog does not lead to this test's stopped services.
func (k *Keystone) RegisterEndpointsFor(t testing.TB, byType map[string]string) {
	t.Helper()
	var ids []string
	t.Cleanup(func() {
		for _, id := range ids {
			if err := services.Delete(context.Background(), k.admin, id).ExtractErr(); err != nil {
				t.Errorf("keystone: delete service %s: %v", id, err)
			}
		}
	})
	for typ, url := range byType {
		id, err := k.registerEndpoint(context.Background(), typ, typ, url)
		if id != "" {
			ids = append(ids, id)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// RegisterEndpoints registers several services, keyed by service type
// (e.g. openstackfake.Server.Endpoints()).
func (k *Keystone) RegisterEndpoints(ctx context.Context, byType map[string]string) error {
	for typ, url := range byType {
		if err := k.RegisterEndpoint(ctx, typ, typ, url); err != nil {
			return err
		}
	}
	return nil
}

// CreateProject creates a project in the default domain.
func (k *Keystone) CreateProject(ctx context.Context, name string) (Project, error) {
	p, err := projects.Create(ctx, k.admin, projects.CreateOpts{Name: name, DomainID: DefaultDomain}).Extract()
	if err != nil {
		return Project{}, fmt.Errorf("keystone: create project %s: %w", name, err)
	}
	return Project{ID: p.ID, Name: p.Name}, nil
}

// CreateUser creates a user with a random password and gives it role (e.g.
// "member", "admin", "reader") on the project. Names are unique per domain.
func (k *Keystone) CreateUser(ctx context.Context, name string, project Project, role string) (User, error) {
	password := rand.Text()
	u, err := users.Create(ctx, k.admin, users.CreateOpts{
		Name: name, DomainID: DefaultDomain, Password: password, DefaultProjectID: project.ID,
	}).Extract()
	if err != nil {
		return User{}, fmt.Errorf("keystone: create user %s: %w", name, err)
	}
	roleID, err := k.roleID(ctx, role)
	if err != nil {
		return User{}, err
	}
	if err := roles.Assign(ctx, k.admin, roleID, roles.AssignOpts{UserID: u.ID, ProjectID: project.ID}).ExtractErr(); err != nil {
		return User{}, fmt.Errorf("keystone: assign %s to %s on %s: %w", role, name, project.Name, err)
	}
	return User{ID: u.ID, Name: name, Password: password, ProjectID: project.ID, ProjectName: project.Name, Role: role}, nil
}

func (k *Keystone) roleID(ctx context.Context, name string) (string, error) {
	page, err := roles.List(k.admin, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", fmt.Errorf("keystone: list roles: %w", err)
	}
	all, err := roles.ExtractRoles(page)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", fmt.Errorf("keystone: role %q: found %d", name, len(all))
	}
	return all[0].ID, nil
}

// Token is a project-scoped token of a user, as Magnum's request context
// carries it.
type Token struct {
	ID        string    `json:"token"`
	UserID    string    `json:"user_id"`
	ProjectID string    `json:"project_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Token logs the user in with its password, scoped to its project.
func (k *Keystone) Token(ctx context.Context, u User) (Token, error) {
	pc, err := openstack.NewClient(k.AuthURL)
	if err != nil {
		return Token{}, err
	}
	pc.HTTPClient = http.Client{Timeout: 60 * time.Second}
	ic, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return Token{}, err
	}
	res := tokens.Create(ctx, ic, &tokens.AuthOptions{
		UserID: u.ID, Password: u.Password,
		Scope: tokens.Scope{ProjectID: u.ProjectID},
	})
	tok, err := res.ExtractToken()
	if err != nil {
		return Token{}, fmt.Errorf("keystone: token for %s: %w", u.Name, err)
	}
	return Token{ID: tok.ID, UserID: u.ID, ProjectID: u.ProjectID, ExpiresAt: tok.ExpiresAt}, nil
}

// CloudsYAML is a clouds.yaml with one password cloud for the user, the
// shape an operator writes for the sidecar's service identity.
func (k *Keystone) CloudsYAML(cloud string, u User) ([]byte, error) {
	doc := map[string]any{"clouds": map[string]any{cloud: map[string]any{
		"auth": map[string]any{
			"auth_url":          k.AuthURL,
			"username":          u.Name,
			"password":          u.Password,
			"user_domain_id":    DefaultDomain,
			"project_name":      u.ProjectName,
			"project_domain_id": DefaultDomain,
		},
		"auth_type":            "password",
		"region_name":          Region,
		"interface":            "public",
		"identity_api_version": 3,
	}}}
	return yaml.Marshal(doc)
}

// WriteCloudsYAML writes CloudsYAML to path with mode 0600.
func (k *Keystone) WriteCloudsYAML(path, cloud string, u User) error {
	b, err := k.CloudsYAML(cloud, u)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// DomainAdmin is a user with the admin role on a domain of its own, as
// Magnum's trustee domain and its domain admin ([trust] trustee_domain_*).
type DomainAdmin struct {
	Domain   string `json:"domain"`
	DomainID string `json:"domain_id"`
	User     string `json:"user"`
	Password string `json:"password"`
}

// CreateDomainAdmin creates a domain and a user in it with the admin role
// on it.
func (k *Keystone) CreateDomainAdmin(ctx context.Context, domain, user string) (DomainAdmin, error) {
	d, err := domains.Create(ctx, k.admin, domains.CreateOpts{Name: domain, Enabled: gophercloud.Enabled}).Extract()
	if err != nil {
		return DomainAdmin{}, fmt.Errorf("keystone: create domain %s: %w", domain, err)
	}
	password := rand.Text()
	u, err := users.Create(ctx, k.admin, users.CreateOpts{Name: user, DomainID: d.ID, Password: password}).Extract()
	if err != nil {
		return DomainAdmin{}, fmt.Errorf("keystone: create user %s in %s: %w", user, domain, err)
	}
	roleID, err := k.roleID(ctx, "admin")
	if err != nil {
		return DomainAdmin{}, err
	}
	if err := roles.Assign(ctx, k.admin, roleID, roles.AssignOpts{UserID: u.ID, DomainID: d.ID}).ExtractErr(); err != nil {
		return DomainAdmin{}, fmt.Errorf("keystone: assign admin to %s on domain %s: %w", user, domain, err)
	}
	return DomainAdmin{Domain: domain, DomainID: d.ID, User: user, Password: password}, nil
}
