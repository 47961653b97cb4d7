package openstack

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// userAgent is prepended to gophercloud's, so OpenStack's logs say who asked.
const userAgent = "magnum-capi"

// Adapter is the OpenStack adapter, on gophercloud. It is safe for
// concurrent use.
type Adapter struct {
	cfg   Config
	cloud *serviceCloud // nil when no CloudsFile is configured
	http  http.Client   // shared transport: TLS settings and the request timeout
	caPEM []byte        // Config.CAFile, for clusters' Secrets
	log   *slog.Logger

	serviceMu sync.Mutex
	service   *gophercloud.ProviderClient // authenticated on first use, then re-authenticated by gophercloud

	callers *callerCache
}

// New checks the configuration and reads the service identity's clouds.yaml
// and the CA file. It does not talk to OpenStack: Keystone being down at
// start must not stop the sidecar.
func New(cfg Config, log *slog.Logger) (*Adapter, error) {
	if log == nil {
		log = slog.Default()
	}
	a := &Adapter{cfg: cfg, log: log, callers: newCallerCache()}
	if cfg.CloudsFile != "" {
		if cfg.Cloud == "" {
			return nil, &ConfigError{Field: "openstack.cloud", Problem: "required with openstack.cloudsFile"}
		}
		cloud, err := loadServiceCloud(cfg.CloudsFile, cfg.Cloud)
		if err != nil {
			return nil, err
		}
		a.cloud = cloud
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if cfg.CAFile != "" {
		if a.caPEM, err = readPEM(cfg.CAFile, roots); err != nil {
			return nil, &ConfigError{Field: "openstack.caFile", Value: cfg.CAFile, Problem: err.Error()}
		}
	}
	verify := cfg.verify()
	if a.cloud != nil {
		if a.cloud.CACertFile != "" {
			if _, err := readPEM(a.cloud.CACertFile, roots); err != nil {
				return nil, &ConfigError{Field: "openstack.cloudsFile", Value: cfg.CloudsFile, Problem: fmt.Sprintf("cloud %s cacert: %v", cfg.Cloud, err)}
			}
		}
		if a.cloud.Verify != nil && !*a.cloud.Verify {
			verify = false
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{RootCAs: roots, InsecureSkipVerify: !verify, MinVersion: tls.VersionTLS12}
	a.http = http.Client{Transport: transport, Timeout: cfg.timeout()}
	return a, nil
}

func readPEM(path string, pool *x509.CertPool) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("no PEM certificate in %s", path)
	}
	return b, nil
}

// newProvider is an unauthenticated provider client on the adapter's
// transport.
func (a *Adapter) newProvider(authURL string) (*gophercloud.ProviderClient, error) {
	pc, err := openstack.NewClient(authURL)
	if err != nil {
		return nil, &ConfigError{Field: "auth_url", Value: authURL, Problem: err.Error()}
	}
	pc.HTTPClient = a.http
	pc.UserAgent.Prepend(userAgent)
	return pc, nil
}

// region is the region for endpoint look-ups.
func (a *Adapter) region(caller Caller) string {
	switch {
	case a.cfg.Region != "":
		return a.cfg.Region
	case caller.RegionName != "":
		return caller.RegionName
	case a.cloud != nil:
		return a.cloud.RegionName
	}
	return ""
}

// endpointOpts picks the sidecar's own endpoints.
func (a *Adapter) endpointOpts(caller Caller) gophercloud.EndpointOpts {
	iface := a.cfg.EndpointInterface
	if iface == "" && a.cloud != nil {
		iface = a.cloud.Interface
	}
	avail := gophercloud.AvailabilityPublic
	switch iface {
	case "internal", "internalURL":
		avail = gophercloud.AvailabilityInternal
	case "admin", "adminURL":
		avail = gophercloud.AvailabilityAdmin
	}
	return gophercloud.EndpointOpts{Region: a.region(caller), Availability: avail}
}

// serviceIdentity is what the service identity is called in errors.
func (a *Adapter) serviceIdentity() string {
	return fmt.Sprintf("the service identity (cloud %s in %s)", a.cfg.Cloud, a.cfg.CloudsFile)
}

// serviceClient is the sidecar's own identity, authenticated once and
// re-authenticated by gophercloud when its token expires.
func (a *Adapter) serviceClient(ctx context.Context) (*gophercloud.ProviderClient, error) {
	a.serviceMu.Lock()
	defer a.serviceMu.Unlock()
	if a.service != nil {
		return a.service, nil
	}
	if a.cloud == nil {
		return nil, &ConfigError{Field: "openstack.cloudsFile", Problem: "not set: the sidecar has no service identity to delete application credentials with"}
	}
	pc, err := a.newProvider(a.cloud.AuthInfo.AuthURL)
	if err != nil {
		return nil, err
	}
	if err := openstack.Authenticate(ctx, pc, a.cloud.auth); err != nil {
		return nil, apiError(ctx, "identity", "authenticate", a.serviceIdentity(), err)
	}
	a.service = pc
	return pc, nil
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// callerSession is a caller's token validated by Keystone: the provider
// client (with the token's catalog) and who the token is.
type callerSession struct {
	pc        *gophercloud.ProviderClient
	userID    string
	projectID string
	catalog   *tokens.ServiceCatalog
	expires   time.Time
	// roles are the token's role names on its project.
	roles []string
	// identity is what errors call it: callerToken or clusterCredential.
	identity string
}

// callerToken is what errors call the caller's identity.
const callerToken = "the request's user token"

// clusterCredential is what errors call a cluster's own application
// credential when a request acts as it.
const clusterCredential = "the cluster's application credential"

// callerSession is the identity a request acts as, validated by Keystone:
// the caller's token, passed through unchanged (Keystone validates it, GET
// /v3/auth/tokens, and returns its catalog; no new token is minted, so the
// session ends when Magnum's token does), or, for a request from another
// project, the cluster's application credential (Caller.ClusterCloudsYAML).
// A session is reused for a few minutes, so Facts and CreateCredential in
// one request cost one Keystone call.
func (a *Adapter) callerSession(ctx context.Context, caller Caller) (*callerSession, error) {
	var auth gophercloud.AuthOptions
	identity := callerToken
	switch {
	case caller.AuthToken != "":
		auth.TokenID = caller.AuthToken
	case len(caller.ClusterCloudsYAML) > 0:
		cred, err := credentialFromClouds(caller.ClusterCloudsYAML)
		if err != nil {
			return nil, err
		}
		identity = clusterCredential
		auth.ApplicationCredentialID, auth.ApplicationCredentialSecret, auth.AllowReauth = cred.ID, cred.Secret, true
	default:
		return nil, &ReferenceError{Field: "context.auth_token", Value: "", Problem: "missing: OpenStack look-ups and the application credential act as the requesting user"}
	}
	authURL := first(caller.AuthURL, a.cfg.AuthURL)
	if authURL == "" && a.cloud != nil {
		authURL = a.cloud.AuthInfo.AuthURL
	}
	if authURL == "" {
		return nil, &ConfigError{Field: "openstack.authURL", Problem: "no Keystone URL: the request carries none and none is configured"}
	}
	auth.IdentityEndpoint = authURL
	key := sha256.Sum256([]byte(authURL + "\x00" + caller.AuthToken + "\x00" + auth.ApplicationCredentialID + "\x00" + auth.ApplicationCredentialSecret))
	if s := a.callers.get(key); s != nil {
		return s, a.checkCaller(s, caller)
	}
	s, err := a.authenticate(ctx, auth, identity)
	if err != nil {
		return nil, err
	}
	if err := a.checkCaller(s, caller); err != nil {
		return nil, err
	}
	a.callers.put(key, s)
	return s, nil
}

// tokenResult is what Keystone answered for a token: a validated one
// (tokens.GetResult) or a new one (tokens.CreateResult) alike.
type tokenResult interface {
	ExtractToken() (*tokens.Token, error)
	ExtractUser() (*tokens.User, error)
	ExtractProject() (*tokens.Project, error)
	ExtractRoles() ([]tokens.Role, error)
	ExtractServiceCatalog() (*tokens.ServiceCatalog, error)
	ExtractInto(any) error
}

// tokenExpiry reads the token's expires_at. Keystone writes it in RFC 3339
// with a zone, except for a token an application credential with an
// expiry limits: that one has no zone (UTC, as all of Keystone's times).
func tokenExpiry(res tokenResult) (time.Time, error) {
	var token struct {
		ExpiresAt string `json:"expires_at"`
	}
	// The tokens package's ExtractInto reads inside "token".
	if err := res.ExtractInto(&token); err != nil {
		return time.Time{}, fmt.Errorf("openstack: reading the token: %w", err)
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, token.ExpiresAt); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("openstack: the token's expires_at %q is not a time", token.ExpiresAt)
}

// authenticate asks Keystone about auth (a token to validate or a
// credential to authenticate) and reads who it is.
func (a *Adapter) authenticate(ctx context.Context, auth gophercloud.AuthOptions, identity string) (*callerSession, error) {
	pc, err := a.newProvider(auth.IdentityEndpoint)
	if err != nil {
		return nil, err
	}
	if err := openstack.Authenticate(ctx, pc, auth); err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			// Keystone answers 404 "Could not recognize Fernet token".
			return nil, &AuthError{Identity: identity, Problem: "Keystone does not recognize it (expired or revoked)", Err: err}
		}
		op := "authenticate"
		if auth.TokenID != "" {
			op = "validate the user token"
		}
		return nil, apiError(ctx, "identity", op, identity, err)
	}
	res, ok := pc.GetAuthResult().(tokenResult)
	if !ok {
		return nil, fmt.Errorf("openstack: unexpected auth result %T", pc.GetAuthResult())
	}
	s := &callerSession{pc: pc, identity: identity}
	if s.expires, err = tokenExpiry(res); err != nil {
		return nil, err
	}
	if user, err := res.ExtractUser(); err == nil && user != nil {
		s.userID = user.ID
	}
	if project, err := res.ExtractProject(); err == nil && project != nil {
		s.projectID = project.ID
	}
	if roles, err := res.ExtractRoles(); err == nil {
		for _, r := range roles {
			s.roles = append(s.roles, r.Name)
		}
	}
	if s.catalog, err = res.ExtractServiceCatalog(); err != nil {
		return nil, fmt.Errorf("openstack: reading the token's catalog: %w", err)
	}
	return s, nil
}

// checkCaller refuses a token that is not scoped to the request's project
// or belongs to another user: acting with it would read or create in the
// wrong place.
func (a *Adapter) checkCaller(s *callerSession, caller Caller) error {
	switch {
	case s.projectID == "":
		return &AuthError{Identity: s.identity, Problem: "it is not scoped to a project"}
	case caller.ProjectID != "" && s.projectID != caller.ProjectID:
		return &AuthError{Identity: s.identity, Problem: fmt.Sprintf("it is scoped to project %s, the request is for project %s", s.projectID, caller.ProjectID)}
	case caller.UserID != "" && s.userID != caller.UserID:
		return &AuthError{Identity: s.identity, Problem: fmt.Sprintf("it belongs to user %s, the request is from user %s", s.userID, caller.UserID)}
	}
	return nil
}
