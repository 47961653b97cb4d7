package keystone

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"sigs.k8s.io/yaml"
)

var shared Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Stop()
	os.Exit(code)
}

func TestStartServesV3InWALMode(t *testing.T) {
	k := shared.Get(t)
	resp, err := http.Get(k.AuthURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", k.AuthURL, resp.StatusCode)
	}
	out, err := exec.Command("sqlite3", filepath.Join(k.Dir, "keystone.db"), "PRAGMA journal_mode;").CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "wal" {
		t.Fatalf("journal_mode = %q, want wal (rollback journal makes app-credential deletes fail)", got)
	}
}

func TestUsersGetProjectScopedTokensWithTheirRole(t *testing.T) {
	k := shared.Get(t)
	ctx := context.Background()
	project, err := k.CreateProject(ctx, "roles-"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"member", "reader", "admin"} {
		t.Run(role, func(t *testing.T) {
			u, err := k.CreateUser(ctx, "user-"+role, project, role)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := k.Token(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if tok.ProjectID != project.ID || tok.UserID != u.ID {
				t.Fatalf("token for %s/%s, want %s/%s", tok.UserID, tok.ProjectID, u.ID, project.ID)
			}
			roles, err := tokens.Get(ctx, k.Admin(), tok.ID).ExtractRoles()
			if err != nil {
				t.Fatal(err)
			}
			if !hasRole(roles, role) {
				t.Fatalf("token roles %v, want %s", roles, role)
			}
		})
	}
}

func hasRole(roles []tokens.Role, name string) bool {
	for _, r := range roles {
		if r.Name == name {
			return true
		}
	}
	return false
}

func TestRegisteredEndpointsAppearInTheCatalog(t *testing.T) {
	k := shared.Get(t)
	ctx := context.Background()
	project, err := k.CreateProject(ctx, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	u, err := k.CreateUser(ctx, "catalog-user", project, "member")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.RegisterEndpoint(ctx, "volumev3", "cinderv3", "http://127.0.0.1:1/volume/v3/%(project_id)s"); err != nil {
		t.Fatal(err)
	}
	tok, err := k.Token(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := tokens.Get(ctx, k.Admin(), tok.ID).ExtractServiceCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"identity": k.AuthURL,
		"volumev3": "http://127.0.0.1:1/volume/v3/" + project.ID,
	}
	for typ, url := range want {
		if got := publicURL(catalog, typ); got != url {
			t.Errorf("catalog %s public URL = %q, want %q", typ, got, url)
		}
	}
}

func publicURL(c *tokens.ServiceCatalog, typ string) string {
	for _, e := range c.Entries {
		if e.Type != typ {
			continue
		}
		for _, ep := range e.Endpoints {
			if ep.Interface == "public" && ep.Region == Region {
				return ep.URL
			}
		}
	}
	return ""
}

// The clouds.yaml written for a service identity must log in as that user,
// the way the sidecar reads it.
func TestCloudsYAMLAuthenticates(t *testing.T) {
	k := shared.Get(t)
	ctx := context.Background()
	project, err := k.CreateProject(ctx, "service-clouds")
	if err != nil {
		t.Fatal(err)
	}
	u, err := k.CreateUser(ctx, "clouds-user", project, "admin")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := k.WriteCloudsYAML(path, "magnum", u); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Clouds map[string]struct {
			Auth struct {
				AuthURL     string `json:"auth_url"`
				Username    string `json:"username"`
				Password    string `json:"password"`
				ProjectName string `json:"project_name"`
			} `json:"auth"`
			RegionName string `json:"region_name"`
		} `json:"clouds"`
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	c, ok := doc.Clouds["magnum"]
	if !ok || c.RegionName != Region {
		t.Fatalf("clouds.yaml: %s", raw)
	}
	_, err = openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
		IdentityEndpoint: c.Auth.AuthURL, Username: c.Auth.Username, Password: c.Auth.Password,
		DomainID: DefaultDomain,
		Scope:    &gophercloud.AuthScope{ProjectName: c.Auth.ProjectName, DomainID: DefaultDomain},
	})
	if err != nil {
		t.Fatalf("authenticate with clouds.yaml: %v", err)
	}
}

// uwsgi runs several threads over one SQLite database and an in-process
// cache; concurrent logins and validations must neither deadlock nor hit
// "database is locked".
func TestConcurrentRequests(t *testing.T) {
	k := shared.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	project, err := k.CreateProject(ctx, "concurrent")
	if err != nil {
		t.Fatal(err)
	}
	u, err := k.CreateUser(ctx, "concurrent-user", project, "member")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				tok, err := k.Token(ctx, u)
				if err != nil {
					errs <- err
					return
				}
				if err := tokens.Get(ctx, k.Admin(), tok.ID).Err; err != nil {
					errs <- fmt.Errorf("validate: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Stop must leave no uwsgi behind and remove the temporary directory.
func TestStopEndsUwsgiAndRemovesDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	k, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := k.proc.cmd.Process.Pid
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(k.AuthURL); err == nil {
		t.Fatalf("%s still answers after Stop", k.AuthURL)
	}
	if _, err := os.Stat(k.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state dir %s still there: %v", k.Dir, err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Fatalf("uwsgi master %d still running", pid)
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestAdminIdentityIsKnown(t *testing.T) {
	k := shared.Get(t)
	if k.AdminUserID == "" || k.AdminProjectID == "" {
		t.Fatalf("admin user %q project %q", k.AdminUserID, k.AdminProjectID)
	}
}
