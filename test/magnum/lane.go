package magnum

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/magnum-capi/magnum-capi/test/debianroot"
	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/ports"
)

// Lane is one Magnum release running against the Cloud: its magnum-api and
// magnum-conductor (separate processes, Debian's commands) in a private
// mount namespace (on this machine's own files for Magnum 15, chrooted to a
// debootstrapped root file system overlaid for this run for 20 and 23),
// the shim installed as the operator guide says, /etc/magnum/magnum.conf
// from the guide's block, its database upgraded by magnum-db-manage, a
// Keystone region whose container-infra endpoint is its magnum-api, and a
// project and member user of its own driving it through the CLI.
type Lane struct {
	Release Release
	Cloud   *Cloud
	Dir     string
	NS      *Namespace
	// RootInfo describes the root file system (zero for Magnum 15).
	RootInfo debianroot.Info
	// APIURL is magnum-api's versioned URL (the catalog's endpoint).
	APIURL string
	// Project and User own the lane's clusters; CLI acts as User.
	Project keystone.Project
	User    keystone.User
	CLI     *CLI
	// Admins is another project, whose Admin (role admin) is a cloud
	// admin acting on the lane's clusters through AdminCLI, as Magnum's
	// default policy lets it (cluster:update_all_projects and friends).
	Admins   keystone.Project
	Admin    keystone.User
	AdminCLI *CLI
	// InstallOutput is what the guide's install-shim block printed.
	InstallOutput string
	// Watch, when set, is told of each status a Wait sees, as it sees it.
	Watch func(Transition)

	api, conductor *process
	varDir         string // where /var of the namespace is written, seen from outside
}

// StartLane brings a release up against the cloud.
func StartLane(ctx context.Context, c *Cloud, rel Release) (_ *Lane, err error) {
	l := &Lane{Release: rel, Cloud: c, Dir: filepath.Join(c.Dir, rel.Name())}
	defer func() {
		if err != nil {
			l.Stop()
		}
	}()
	begin := time.Now()
	sidecarRun := c.Sidecar.RunDir
	if rel.Host {
		l.varDir = filepath.Join(l.Dir, "var")
		if l.NS, err = StartNamespace(ctx, "/", "/", hostMounts(l.Dir, sidecarRun)); err != nil {
			return nil, err
		}
	} else {
		image, info, err := debianroot.Ensure(ctx, rel.Suite, c.logf)
		if err != nil {
			return nil, err
		}
		l.RootInfo = info
		l.varDir = filepath.Join(l.Dir, "upper", "var")
		mounts := rootMounts(l.Dir, image, sidecarRun, c.ShimDir)
		if l.NS, err = StartNamespace(ctx, filepath.Join(l.Dir, "root"), image, mounts); err != nil {
			return nil, err
		}
	}
	if l.InstallOutput, err = InstallShim(ctx, l.NS, c.ShimDir); err != nil {
		return nil, err
	}

	db, user := rel.Name(), rel.Name()
	if err := c.DB.CreateDatabase(ctx, db, user, c.dbPassword); err != nil {
		return nil, err
	}
	apiPort, err := ports.Free()
	if err != nil {
		return nil, err
	}
	l.APIURL = fmt.Sprintf("http://127.0.0.1:%d/v1", apiPort)
	service, err := c.serviceUser()
	if err != nil {
		return nil, err
	}
	conf, err := MagnumConf(Site{
		"DEFAULT":            {"transport_url": c.MQ.TransportURL(rel.VHost())},
		"api":                {"host": "127.0.0.1", "port": strconv.Itoa(apiPort), "workers": "1"},
		"conductor":          {"workers": "1"},
		"database":           {"connection": c.DB.URL(db, user, c.dbPassword)},
		"keystone_authtoken": {"www_authenticate_uri": c.H.Info.AuthURL, "auth_url": c.H.Info.AuthURL, "password": service.Password},
		"keystone_auth":      {"auth_url": c.H.Info.AuthURL, "password": service.Password},
		"trust":              {"trustee_domain_admin_password": c.domainAdminPassword},
	})
	if err != nil {
		return nil, err
	}
	if err := l.NS.WriteFile(ctx, "/etc/magnum/magnum.conf", []byte(conf), 0o640); err != nil {
		return nil, err
	}
	if out, err := l.NS.Run(ctx, nil, "magnum-db-manage", "--config-file", "/etc/magnum/magnum.conf", "upgrade"); err != nil {
		return nil, fmt.Errorf("magnum-db-manage upgrade: %w\n%s", err, out)
	}

	if err := c.addRegion(ctx, rel.Region()); err != nil {
		return nil, err
	}
	block, err := GuideBlock("keystone-endpoint")
	if err != nil {
		return nil, err
	}
	if _, err := c.Admin.Script(ctx, block, []string{"REGION=" + rel.Region(), "MAGNUM_URL=" + l.APIURL}); err != nil {
		return nil, fmt.Errorf("the operator guide's keystone-endpoint block: %w", err)
	}

	if err := l.StartAPI(ctx); err != nil {
		return nil, err
	}
	if err := l.StartConductor(ctx); err != nil {
		return nil, err
	}

	k := c.H.Keystone
	if l.Project, err = k.CreateProject(ctx, "project-"+rel.Name()); err != nil {
		return nil, err
	}
	if l.User, err = k.CreateUser(ctx, "user-"+rel.Name(), l.Project, "member"); err != nil {
		return nil, err
	}
	if l.CLI, err = l.newCLI("cli", l.User, l.Project); err != nil {
		return nil, err
	}
	if l.Admins, err = k.CreateProject(ctx, "admins-"+rel.Name()); err != nil {
		return nil, err
	}
	if l.Admin, err = k.CreateUser(ctx, "cloud-admin-"+rel.Name(), l.Admins, "admin"); err != nil {
		return nil, err
	}
	if l.AdminCLI, err = l.newCLI("admin-cli", l.Admin, l.Admins); err != nil {
		return nil, err
	}
	c.logf("Magnum %d (%s) up in %s: magnum-api %s", rel.Major, rel.Suite, time.Since(begin).Round(100*time.Millisecond), l.APIURL)
	return l, nil
}

// newCLI is the openstack CLI as user, scoped to project, in the lane's
// region.
func (l *Lane) newCLI(dir string, user keystone.User, project keystone.Project) (*CLI, error) {
	cloud := l.Release.Name()
	if dir != "cli" {
		cloud += "-" + dir
	}
	return NewCLI(filepath.Join(l.Dir, dir), cloud, map[string]any{
		"auth": map[string]any{
			"auth_url": l.Cloud.H.Info.AuthURL, "username": user.Name, "password": user.Password,
			"project_name": project.Name, "user_domain_id": keystone.DefaultDomain, "project_domain_id": keystone.DefaultDomain,
		},
		"region_name": l.Release.Region(), "identity_api_version": 3,
	})
}

// rootMounts overlay a cached root file system (image) at dir/root, with
// what Magnum needs there (/proc, /dev, a fresh /run) and the sidecar's
// socket directory at /run/magnum-capi; share appears at its own path.
func rootMounts(dir, image, sidecarRun, share string) []Mount {
	root := filepath.Join(dir, "root")
	return []Mount{
		{Target: root, Lower: image, Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work", "root")},
		{Target: filepath.Join(root, "proc"), Proc: true},
		{Target: filepath.Join(root, "dev"), Source: "/dev"},
		{Target: filepath.Join(root, "run"), Tmpfs: true},
		{Target: filepath.Join(root, "run", "magnum-capi"), Source: sidecarRun},
		{Target: filepath.Join(root, share), Source: share},
	}
}

// serviceUser is the sidecar's identity in the test stack, which is also
// Magnum's service user (admin on project service), as the guide allows.
func (c *Cloud) serviceUser() (keystone.User, error) {
	return serviceUserFromClouds(c.H.Info.ServiceCloudsFile, c.H.Info.ServiceCloud)
}

// Log is the path, seen from outside, of a file Magnum writes under
// /var/log/magnum.
func (l *Lane) Log(name string) string { return filepath.Join(l.varDir, "log", "magnum", name) }

// service runs a Magnum command as Debian's units do (config file, log
// file under /var/log/magnum).
func (l *Lane) service(ctx context.Context, name string) (*process, error) {
	cmd := l.NS.Command(context.WithoutCancel(ctx), nil, name,
		"--config-file", "/etc/magnum/magnum.conf", "--log-file", "/var/log/magnum/"+name+".log")
	return startProcess(name, cmd, filepath.Join(l.Dir, name+".out"))
}

// StartAPI starts magnum-api and waits until it answers.
func (l *Lane) StartAPI(ctx context.Context) error {
	var err error
	if l.api, err = l.service(ctx, "magnum-api"); err != nil {
		return err
	}
	client := &http.Client{Timeout: 2 * time.Second}
	return l.api.waitFor(ctx, "magnum-api to answer", 2*time.Minute, func() bool {
		resp, err := client.Get(strings.TrimSuffix(l.APIURL, "/v1") + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// StartConductor starts magnum-conductor and waits until it has reported
// itself up in Magnum's database (magnum_service, as `coe service list`
// shows it).
func (l *Lane) StartConductor(ctx context.Context) error {
	var err error
	before, _ := l.conductorReports(ctx)
	if l.conductor, err = l.service(ctx, "magnum-conductor"); err != nil {
		return err
	}
	return l.conductor.waitFor(ctx, "magnum-conductor to report itself up", 2*time.Minute, func() bool {
		n, err := l.conductorReports(ctx)
		return err == nil && n > before
	})
}

func (l *Lane) conductorReports(ctx context.Context) (int, error) {
	out, err := l.Cloud.DB.SQL(ctx, "SELECT COALESCE(SUM(report_count),0) FROM "+l.Release.Name()+
		".magnum_service WHERE `binary`='magnum-conductor'")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// StopConductor stops magnum-conductor with sig (SIGKILL: a crash).
func (l *Lane) StopConductor(sig syscall.Signal) { l.conductor.stop(sig, 30*time.Second) }

// SQL runs a query on the release's database.
func (l *Lane) SQL(ctx context.Context, query string) (string, error) {
	return l.Cloud.DB.SQL(ctx, "USE "+l.Release.Name()+"; "+query)
}

// Stop ends the release's processes and namespace.
func (l *Lane) Stop() {
	l.conductor.stop(syscall.SIGTERM, 30*time.Second)
	l.api.stop(syscall.SIGTERM, 30*time.Second)
	if l.NS != nil {
		l.NS.Close()
	}
}
