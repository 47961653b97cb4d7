package keystone

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// Options tune Start; the zero value is fine.
type Options struct {
	// Dir is where the instance keeps its state; empty means a new
	// temporary directory that Stop removes.
	Dir string
	// KeepDir leaves Dir in place after Stop (to read the logs).
	KeepDir bool
}

// Keystone is one running Keystone.
type Keystone struct {
	// AuthURL is the versioned identity URL, http://127.0.0.1:<port>/v3.
	AuthURL string
	// Dir holds keystone.conf, the database, the keys and log/.
	Dir string
	// StartDuration is how long Start took, for the record.
	StartDuration time.Duration
	// AdminUserID and AdminProjectID identify the bootstrap admin.
	AdminUserID, AdminProjectID string

	layout  layout
	proc    *uwsgiProcess
	ownDir  bool
	keepDir bool
	admin   *gophercloud.ServiceClient
}

// Start prepares a state directory from the template, serves Keystone and
// registers the identity endpoint in the catalog. It fails with
// ErrMissingPackages when the Debian packages are not installed.
func Start(ctx context.Context, opts Options) (*Keystone, error) {
	begin := time.Now()
	if err := checkDeps(); err != nil {
		return nil, err
	}
	tmpl, err := ensureTemplate(ctx)
	if err != nil {
		return nil, err
	}
	k := &Keystone{Dir: opts.Dir, keepDir: opts.KeepDir}
	if k.Dir == "" {
		if k.Dir, err = os.MkdirTemp("", "keystone-"); err != nil {
			return nil, err
		}
		k.ownDir = true
	}
	k.layout = layout{dir: k.Dir}
	if err := k.layout.writeConf(); err != nil {
		k.cleanup()
		return nil, err
	}
	if err := copyTemplate(tmpl, k.layout); err != nil {
		k.cleanup()
		return nil, fmt.Errorf("keystone: copy template: %w", err)
	}
	if k.proc, err = serve(ctx, k.layout); err != nil {
		k.cleanup()
		return nil, err
	}
	k.AuthURL = fmt.Sprintf("http://127.0.0.1:%d/v3", k.proc.port)
	if k.admin, err = k.passwordClient(ctx, AdminUser, AdminPassword, AdminProject); err != nil {
		return nil, k.fail(fmt.Errorf("keystone: admin login: %w", err))
	}
	if res, ok := k.admin.ProviderClient.GetAuthResult().(tokens.CreateResult); ok {
		if u, err := res.ExtractUser(); err == nil {
			k.AdminUserID = u.ID
		}
		if p, err := res.ExtractProject(); err == nil && p != nil {
			k.AdminProjectID = p.ID
		}
	}
	if err := k.RegisterEndpoint(ctx, "identity", "keystone", k.AuthURL); err != nil {
		return nil, k.fail(err)
	}
	k.StartDuration = time.Since(begin)
	return k, nil
}

// Stop ends uwsgi and removes the state directory Start created (unless
// KeepDir). It is safe to call twice.
func (k *Keystone) Stop() error {
	var err error
	if k.proc != nil {
		err = k.proc.stop()
	}
	k.cleanup()
	return err
}

// fail stops a Keystone that started but does not work, and returns err
// with the logs read before the state directory goes.
func (k *Keystone) fail(err error) error {
	logs := k.Logs()
	k.Stop()
	return fmt.Errorf("%w%s", err, logs)
}

func (k *Keystone) cleanup() {
	if k.ownDir && !k.keepDir {
		os.RemoveAll(k.Dir)
	}
}

// Logs returns the tails of the uwsgi and Keystone logs, for a failing test.
func (k *Keystone) Logs() string {
	return logTail(k.layout.uwsgiStderr()) + logTail(k.layout.uwsgiLog()) + logTail(k.layout.keystoneLog())
}

// Admin is an identity v3 client authenticated as the bootstrap admin
// (project-scoped to "admin"), re-authenticating when its token expires.
func (k *Keystone) Admin() *gophercloud.ServiceClient { return k.admin }

// passwordClient logs a user in with a project-scoped token.
func (k *Keystone) passwordClient(ctx context.Context, user, password, project string) (*gophercloud.ServiceClient, error) {
	pc, err := openstack.NewClient(k.AuthURL)
	if err != nil {
		return nil, err
	}
	pc.HTTPClient = http.Client{Timeout: 60 * time.Second}
	err = openstack.Authenticate(ctx, pc, gophercloud.AuthOptions{
		IdentityEndpoint: k.AuthURL,
		Username:         user,
		Password:         password,
		DomainID:         DefaultDomain,
		Scope:            &gophercloud.AuthScope{ProjectName: project, DomainID: DefaultDomain},
		AllowReauth:      true,
	})
	if err != nil {
		return nil, err
	}
	return openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
}
