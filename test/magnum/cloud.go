package magnum

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/keystone"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// Cloud is one OpenStack as the Magnum releases share it: the test stack
// (management cluster, chart repository, the real Keystone, the OpenStack
// API doubles), MariaDB, RabbitMQ, Keystone's entries for Magnum (service,
// trustee domain and its admin, as the operator guide creates them), the
// sidecar, and the shim's wheel. Each release then gets a Lane: its own
// region, database and virtual host, against all of these.
type Cloud struct {
	Dir     string
	H       *harness.Harness
	DB      *MariaDB
	MQ      *RabbitMQ
	Sidecar *Sidecar
	// Admin is the openstack CLI as Keystone's admin.
	Admin *CLI
	// ShimDir holds dist/magnum_capi-*.whl (BuildShim).
	ShimDir string
	// Images are the Glance images the guide's templates name, by
	// Kubernetes version.
	Images map[string]string
	// ExternalNetwork is the network the guide's templates name.
	ExternalNetwork string

	domainAdminPassword string
	mqPasswords         map[string]string
	dbPassword          string
	logf                func(string, ...any)
	mu                  sync.Mutex
}

// CloudOptions tune StartCloud.
type CloudOptions struct {
	// Dir holds everything; required.
	Dir string
	// Releases are the Magnum releases that will get lanes (a virtual
	// host each, declared when the broker starts).
	Releases []Release
	// SidecarBinary is magnum-capi; built from ./cmd/magnum-capi when
	// empty.
	SidecarBinary string
	// Logf reports progress (t.Logf, or the demo's printer).
	Logf func(string, ...any)
}

// KubeVersions are the images the guide's templates use: one minor
// version apart, so an upgrade and a refused skip can both be tried.
var KubeVersions = []string{"v1.33.2", "v1.34.1", "v1.35.0"}

// ImageName is the Glance image name the operator guide uses for a
// Kubernetes version.
func ImageName(kubeVersion string) string { return "ubuntu-2204-kube-" + kubeVersion }

// StartCloud starts everything the lanes share; Stop ends it.
func StartCloud(ctx context.Context, opts CloudOptions) (_ *Cloud, err error) {
	c := &Cloud{Dir: opts.Dir, logf: opts.Logf, mqPasswords: map[string]string{}, Images: map[string]string{}}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	begin := time.Now()
	type result struct {
		name string
		err  error
	}
	// The slow starters (the test stack; RabbitMQ takes 10-30 s to boot)
	// run side by side.
	results := make(chan result, 4)
	go func() {
		h, err := harness.Start(ctx, harness.Options{Step: 100 * time.Millisecond, Dir: filepath.Join(c.Dir, "stack")})
		c.mu.Lock()
		c.H = h
		c.mu.Unlock()
		results <- result{"the test stack", err}
	}()
	go func() {
		vhosts := map[string]string{}
		for _, r := range opts.Releases {
			vhosts[r.VHost()] = rand.Text()
		}
		mq, err := StartRabbitMQ(ctx, filepath.Join(c.Dir, "rabbitmq"), vhosts)
		c.mu.Lock()
		c.MQ, c.mqPasswords = mq, vhosts
		c.mu.Unlock()
		results <- result{"RabbitMQ", err}
	}()
	go func() {
		db, err := StartMariaDB(ctx, filepath.Join(c.Dir, "mariadb"))
		c.mu.Lock()
		c.DB = db
		c.mu.Unlock()
		results <- result{"MariaDB", err}
	}()
	go func() {
		dir, err := BuildShim(ctx, filepath.Join(c.Dir, "shim"))
		c.mu.Lock()
		c.ShimDir = dir
		c.mu.Unlock()
		results <- result{"the shim's wheel", err}
	}()
	var errs []error
	for range 4 {
		r := <-results
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.name, r.err))
		} else {
			c.logf("%s ready (%s)", r.name, time.Since(begin).Round(100*time.Millisecond))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("starting the cloud: %v", errs)
	}
	c.dbPassword = rand.Text()
	info := c.H.Info
	if c.Admin, err = NewCLI(filepath.Join(c.Dir, "admin"), "admin", map[string]any{
		"auth": map[string]any{
			"auth_url": info.AuthURL, "username": keystone.AdminUser, "password": keystone.AdminPassword,
			"project_name": keystone.AdminProject, "user_domain_id": keystone.DefaultDomain, "project_domain_id": keystone.DefaultDomain,
		},
		"region_name": keystone.Region, "identity_api_version": 3,
	}); err != nil {
		return nil, err
	}
	block, err := GuideBlock("keystone-magnum")
	if err != nil {
		return nil, err
	}
	c.domainAdminPassword = rand.Text()
	if _, err := c.Admin.Script(ctx, block, []string{"DOMAIN_ADMIN_PASS=" + c.domainAdminPassword}); err != nil {
		return nil, fmt.Errorf("the operator guide's keystone-magnum block: %w", err)
	}
	for _, v := range KubeVersions {
		img := c.H.OpenStack.AddImage(openstackfake.Image{Name: ImageName(v), Properties: map[string]string{
			"os_distro": "ubuntu", "kube_version": v, "magnum_driver": "magnum_capi",
		}})
		c.Images[v] = img.ID
	}
	c.ExternalNetwork = "public"
	binary := opts.SidecarBinary
	if binary == "" {
		if binary, err = buildSidecar(ctx, c.Dir); err != nil {
			return nil, err
		}
	}
	if c.Sidecar, err = StartSidecar(ctx, filepath.Join(c.Dir, "sidecar"), binary, info); err != nil {
		return nil, fmt.Errorf("the sidecar: %w", err)
	}
	c.logf("cloud ready in %s: Keystone %s, MariaDB 127.0.0.1:%d, RabbitMQ 127.0.0.1:%d, sidecar %s",
		time.Since(begin).Round(100*time.Millisecond), info.AuthURL, c.DB.Port, c.MQ.Port, c.Sidecar.Log)
	return c, nil
}

// buildSidecar builds magnum-capi as the guide says (CGO_ENABLED=0).
func buildSidecar(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "bin", "magnum-capi")
	if out, err := goBuild(ctx, bin, "./cmd/magnum-capi"); err != nil {
		return "", fmt.Errorf("building the sidecar: %w\n%s", err, out)
	}
	return bin, nil
}

// addRegion creates a region with the OpenStack API doubles' endpoints in
// it (a cloud's regions each have their own Nova, Glance, ...; here they are
// the same doubles).
func (c *Cloud) addRegion(ctx context.Context, region string) error {
	admin := c.H.Keystone.Admin()
	if _, err := regions.Create(ctx, admin, regions.CreateOpts{ID: region}).Extract(); err != nil {
		return fmt.Errorf("keystone: create region %s: %w", region, err)
	}
	pages, err := services.List(admin, nil).AllPages(ctx)
	if err != nil {
		return err
	}
	all, err := services.ExtractServices(pages)
	if err != nil {
		return err
	}
	for typ, url := range c.H.OpenStack.Endpoints() {
		id := ""
		for _, s := range all {
			if s.Type == typ {
				id = s.ID
			}
		}
		if id == "" {
			return fmt.Errorf("keystone: no %s service", typ)
		}
		for _, iface := range []gophercloud.Availability{gophercloud.AvailabilityPublic, gophercloud.AvailabilityInternal} {
			if _, err := endpoints.Create(ctx, admin, endpoints.CreateOpts{Availability: iface, Region: region, URL: url, ServiceID: id}).Extract(); err != nil {
				return fmt.Errorf("keystone: %s endpoint in %s: %w", typ, region, err)
			}
		}
	}
	return nil
}

// Stop ends everything, in reverse order.
func (c *Cloud) Stop() {
	if c.Sidecar != nil {
		c.Sidecar.Stop()
	}
	if c.MQ != nil {
		c.MQ.Stop()
	}
	if c.DB != nil {
		c.DB.Stop()
	}
	if c.H != nil {
		_ = c.H.Stop()
	}
	if os.Getenv("MAGNUM_CAPI_KEEP_CLOUD") == "" {
		_ = os.RemoveAll(filepath.Join(c.Dir, "shim"))
	}
}

// serviceUserFromClouds reads a password identity from a clouds.yaml.
func serviceUserFromClouds(file, cloud string) (keystone.User, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return keystone.User{}, err
	}
	var doc struct {
		Clouds map[string]struct {
			Auth struct {
				Username    string `json:"username"`
				Password    string `json:"password"`
				ProjectName string `json:"project_name"`
			} `json:"auth"`
		} `json:"clouds"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return keystone.User{}, err
	}
	a, ok := doc.Clouds[cloud]
	if !ok {
		return keystone.User{}, fmt.Errorf("%s has no cloud %s", file, cloud)
	}
	return keystone.User{Name: a.Auth.Username, Password: a.Auth.Password, ProjectName: a.Auth.ProjectName}, nil
}
