package openstack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/yaml"
)

// Config is how the sidecar reaches OpenStack (server/config's OpenStack
// section maps onto it).
type Config struct {
	// CloudsFile is the operator's clouds.yaml holding the service
	// identity; Cloud names the entry. Empty: no service identity, so
	// DeleteCredential fails with a configuration error.
	CloudsFile string
	Cloud      string
	// AuthURL is Keystone's URL for the caller's token and for clusters'
	// clouds.yaml when Magnum's request context carries none; the service
	// cloud's auth_url is the last fallback.
	AuthURL string
	// Region selects endpoints and is written into clusters' clouds.yaml;
	// empty: the caller's region, then the service cloud's region_name.
	Region string
	// Interface is written into clusters' clouds.yaml (public unless the
	// clusters reach OpenStack on internal endpoints).
	Interface string
	// EndpointInterface is what the sidecar itself uses for Glance,
	// Neutron, Cinder and Nova; empty: the service cloud's interface, then
	// public.
	EndpointInterface string
	// CAFile is a PEM bundle the sidecar trusts for OpenStack's APIs (on
	// top of the system's) and the clusters' Secret carries as cacert.
	CAFile string
	// Verify false turns TLS verification off, for the sidecar and in the
	// clusters' clouds.yaml ("verify: false"). nil means true.
	Verify *bool
	// Timeout bounds each HTTP request to OpenStack (default 30 s).
	Timeout time.Duration
	// SkipFlavorCheck turns off Facts' check that the node groups'
	// flavors exist (and meet the minimums below).
	SkipFlavorCheck bool
	// MinFlavorRAMMiB and MinFlavorVCPUs reject flavors too small to run
	// a Kubernetes node; zero means no minimum.
	MinFlavorRAMMiB int
	MinFlavorVCPUs  int
	// CredentialRoles are the roles a cluster's application credential may
	// get (those of them the caller holds); empty: every role of the
	// caller's token (Keystone's default). The sidecar's configuration
	// (openstack.applicationCredentialRoles) says which.
	CredentialRoles []string
	// CredentialLifetime is how long a cluster's application credential
	// lives; 0: it does not expire.
	CredentialLifetime time.Duration
}

const defaultTimeout = 30 * time.Second

func (c Config) verify() bool { return c.Verify == nil || *c.Verify }

func (c Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return defaultTimeout
	}
	return c.Timeout
}

func (c Config) clusterInterface() string {
	if c.Interface == "" {
		return "public"
	}
	return c.Interface
}

// serviceCloud is the service identity: its clouds.yaml entry as
// gophercloud's reader (openstack/config/clouds) decodes it, and the
// options that reader derives from it.
type serviceCloud struct {
	clouds.Cloud
	auth gophercloud.AuthOptions
}

// loadServiceCloud reads the named cloud from the operator's clouds.yaml.
// Problems are ConfigErrors naming the file, never its secrets.
func loadServiceCloud(file, cloud string) (*serviceCloud, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cannot read: %v", err)}
	}
	entry, err := cloudEntry(raw, cloud)
	switch {
	case errors.Is(err, errNoSuchCloud):
		return nil, &ConfigError{Field: "openstack.cloud", Value: cloud, Problem: fmt.Sprintf("no such cloud in %s", file)}
	case err != nil:
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: "not a clouds.yaml: " + err.Error()}
	}
	auth := entry.AuthInfo
	switch {
	case auth.AuthURL == "":
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s has no auth.auth_url", cloud)}
	case !supportedAuthTypes[entry.AuthType]:
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s: auth_type %s is not supported (password or v3applicationcredential)", cloud, entry.AuthType)}
	case auth.ApplicationCredentialID == "" && auth.ApplicationCredentialName == "" && auth.Password == "":
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s has neither a password nor an application credential", cloud)}
	}
	// The region and interface are the entry's, never OS_REGION_NAME's or
	// OS_INTERFACE's from the sidecar's environment.
	ao, _, _, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(raw)), clouds.WithCloudName(cloud),
		clouds.WithRegion(entry.RegionName), clouds.WithEndpointType(entry.Interface))
	if err != nil {
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s: %s", cloud, yamlProblem(err))}
	}
	ao.AllowReauth = true
	if ao.ApplicationCredentialID != "" || ao.ApplicationCredentialName != "" {
		// An application credential carries its own project scope.
		ao.Scope, ao.TenantID, ao.TenantName = nil, "", ""
	}
	return &serviceCloud{Cloud: entry, auth: ao}, nil
}

// supportedAuthTypes are the clouds.yaml auth_types the service identity
// may use ("" is password).
var supportedAuthTypes = map[clouds.AuthType]bool{
	"": true, clouds.AuthPassword: true, clouds.AuthV3Password: true,
	clouds.AuthV3ApplicationCredential: true, "applicationcredential": true,
}

// errNoSuchCloud: the clouds.yaml has no entry of the name asked for.
var errNoSuchCloud = errors.New("no such cloud")

// cloudEntry decodes raw into gophercloud's clouds.yaml types and returns
// the named entry, with an auth section even when it has none.
func cloudEntry(raw []byte, name string) (clouds.Cloud, error) {
	var doc clouds.Clouds
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return clouds.Cloud{}, errors.New(yamlProblem(err))
	}
	c, ok := doc.Clouds[name]
	if !ok {
		return clouds.Cloud{}, errNoSuchCloud
	}
	if c.AuthInfo == nil {
		c.AuthInfo = &clouds.AuthInfo{}
	}
	return c, nil
}

// yamlProblem keeps a YAML error's position but not the line it quotes,
// which could be a password.
func yamlProblem(err error) string {
	msg := err.Error()
	if i := len(msg); i > 120 {
		msg = msg[:120]
	}
	return msg
}
