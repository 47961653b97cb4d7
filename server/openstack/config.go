package openstack

import (
	"fmt"
	"os"
	"time"

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

// serviceCloud is the subset of a clouds.yaml entry the service identity
// uses: password or application-credential auth, project scope, region,
// interface and TLS settings.
type serviceCloud struct {
	Auth struct {
		AuthURL                     string `json:"auth_url"`
		Username                    string `json:"username"`
		UserID                      string `json:"user_id"`
		Password                    string `json:"password"`
		UserDomainName              string `json:"user_domain_name"`
		UserDomainID                string `json:"user_domain_id"`
		ProjectName                 string `json:"project_name"`
		ProjectID                   string `json:"project_id"`
		ProjectDomainName           string `json:"project_domain_name"`
		ProjectDomainID             string `json:"project_domain_id"`
		DomainName                  string `json:"domain_name"`
		DomainID                    string `json:"domain_id"`
		ApplicationCredentialID     string `json:"application_credential_id"`
		ApplicationCredentialName   string `json:"application_credential_name"`
		ApplicationCredentialSecret string `json:"application_credential_secret"`
		SystemScope                 string `json:"system_scope"`
	} `json:"auth"`
	AuthType   string `json:"auth_type"`
	RegionName string `json:"region_name"`
	Interface  string `json:"interface"`
	CACert     string `json:"cacert"`
	Verify     *bool  `json:"verify"`
}

// loadServiceCloud reads the named cloud from the operator's clouds.yaml.
// Problems are ConfigErrors naming the file, never its secrets.
func loadServiceCloud(file, cloud string) (*serviceCloud, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cannot read: %v", err)}
	}
	var doc struct {
		Clouds map[string]serviceCloud `json:"clouds"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: "not a clouds.yaml: " + yamlProblem(err)}
	}
	c, ok := doc.Clouds[cloud]
	if !ok {
		return nil, &ConfigError{Field: "openstack.cloud", Value: cloud, Problem: fmt.Sprintf("no such cloud in %s", file)}
	}
	switch {
	case c.Auth.AuthURL == "":
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s has no auth.auth_url", cloud)}
	case c.AuthType != "" && c.AuthType != "password" && c.AuthType != "v3password" &&
		c.AuthType != "v3applicationcredential" && c.AuthType != "applicationcredential":
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s: auth_type %s is not supported (password or v3applicationcredential)", cloud, c.AuthType)}
	case c.Auth.ApplicationCredentialID == "" && c.Auth.ApplicationCredentialName == "" && c.Auth.Password == "":
		return nil, &ConfigError{Field: "openstack.cloudsFile", Value: file, Problem: fmt.Sprintf("cloud %s has neither a password nor an application credential", cloud)}
	}
	return &c, nil
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
