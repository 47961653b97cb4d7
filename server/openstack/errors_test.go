package openstack

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/openstackfake"
)

// Outages, refused identities and bad tokens reach server/errors.go with the
// right class, and no message quotes the token.
func TestFactsErrorClasses(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		setup  func(*fakeCloud)
		class  string
		errHas string
	}{
		{name: "glance 503 from the load balancer", setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.ImageService, openstackfake.Failure{Status: 503})
		}, class: "Unavailable", errHas: "OpenStack image service unavailable"},
		{name: "neutron 500", setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.NetworkService, openstackfake.Failure{Status: 500})
		}, class: "Unavailable", errHas: "internal server error while processing your request"},
		{name: "cinder 429", setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.VolumeService, openstackfake.Failure{Status: 429})
		}, class: "Unavailable", errHas: "HTTP 429"},
		{name: "nova times out", cfg: Config{Timeout: 300 * time.Millisecond}, setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.ComputeService, openstackfake.Failure{Delay: 3 * time.Second})
		}, class: "Unavailable", errHas: "timed out"},
		{name: "glance drops connections", setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.ImageService, openstackfake.Failure{Drop: true})
		}, class: "Unavailable", errHas: "OpenStack image service unavailable"},
		{name: "keystone 503", setup: func(c *fakeCloud) {
			c.fake.Fail(openstackfake.IdentityService, openstackfake.Failure{Status: 503})
		}, class: "Unavailable", errHas: "OpenStack identity service unavailable"},
		{name: "keystone unreachable", setup: func(c *fakeCloud) {
			c.caller.AuthURL = closedURL(t) + "/v3"
		}, class: "Unavailable", errHas: "OpenStack identity service unavailable"},
		{name: "token keystone does not know", setup: func(c *fakeCloud) {
			c.caller.AuthToken = "gAAAAAB-revoked-token"
		}, class: "FailedPrecondition", errHas: "user token was refused"},
		{name: "token of another project", setup: func(c *fakeCloud) {
			c.caller.ProjectID = otherProjet
		}, class: "FailedPrecondition", errHas: "scoped to project " + testProject},
		{name: "token of another user", setup: func(c *fakeCloud) {
			c.caller.UserID = "someone-else"
		}, class: "FailedPrecondition", errHas: "belongs to user " + testUser},
		{name: "no token", setup: func(c *fakeCloud) {
			c.caller.AuthToken = ""
		}, class: "InvalidArgument", errHas: "context.auth_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newFakeCloud(t, tt.cfg)
			tt.setup(c)
			spec := Objects{
				Cluster:    helmvalues.Cluster{UUID: "c0ffee00-0000-4000-8000-000000000002"},
				Template:   helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID, ExternalNetworkID: "public"},
				NodeGroups: []helmvalues.NodeGroup{{Name: "default-worker", FlavorID: "m1.small"}},
			}
			_, err := c.adapter.Facts(context.Background(), c.caller, spec)
			if got := class(err); got != tt.class {
				t.Fatalf("class %s, want %s: %v", got, tt.class, err)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %q does not say %q", err, tt.errHas)
			}
			if strings.Contains(err.Error(), userToken) || strings.Contains(err.Error(), "revoked-token") {
				t.Errorf("error quotes the token: %v", err)
			}
		})
	}
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// A validated token is reused: Facts then CreateCredential-style calls in one
// request cost one Keystone validation, and a second token is validated
// on its own.
func TestCallerTokenIsValidatedOnce(t *testing.T) {
	c := newFakeCloud(t, Config{})
	spec := Objects{Template: helmvalues.ClusterTemplate{ImageID: c.kubeImage.ID}}
	for i := 0; i < 3; i++ {
		if _, err := c.adapter.Facts(context.Background(), c.caller, spec); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.fake.Requests(openstackfake.IdentityService); n != 1 {
		t.Fatalf("%d token validations for one token, want 1", n)
	}
	c.fake.AcceptToken(openstackfake.Token{ID: "second-token", UserID: testUser, ProjectID: testProject})
	c.caller.AuthToken = "second-token"
	if _, err := c.adapter.Facts(context.Background(), c.caller, spec); err != nil {
		t.Fatal(err)
	}
	if n := c.fake.Requests(openstackfake.IdentityService); n != 2 {
		t.Fatalf("%d token validations for two tokens, want 2", n)
	}
}

func TestAPIErrorClasses(t *testing.T) {
	code := func(status int, body string) error {
		return gophercloud.ErrUnexpectedResponseCode{Actual: status, Body: []byte(body), Method: "GET", URL: "http://x/v2/images"}
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	tests := []struct {
		name  string
		ctx   context.Context
		err   error
		class string
		text  string
	}{
		{"401", context.Background(), code(401, `{"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}`), "FailedPrecondition", "requires authentication"},
		{"403", context.Background(), code(403, `{"forbidden":{"code":403,"message":"Policy doesn't allow x"}}`), "FailedPrecondition", "Policy doesn't allow x"},
		{"500 html", context.Background(), code(500, "<html><body><h1>500 Internal Server Error</h1>\n  boom <br/></body></html>"), "Unavailable", "500 Internal Server Error boom"},
		{"502", context.Background(), code(502, ""), "Unavailable", "HTTP 502"},
		{"409 is a bug here", context.Background(), code(409, `{"NeutronError":{"message":"conflict"}}`), "Internal", "unexpected HTTP 409: conflict"},
		{"endpoint missing", context.Background(), &gophercloud.ErrEndpointNotFound{}, "FailedPrecondition", "catalog"},
		{"connection refused", context.Background(), &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}, "Unavailable", "connection refused"},
		{"caller canceled", canceled, context.Canceled, "Internal", "context canceled"},
		{"no answer in time", expired, &url.Error{Op: "Get", URL: "http://nova.internal:8774/v2.1/flavors", Err: context.DeadlineExceeded}, "Unavailable", "no answer within the call's time"},
		{"closed early", context.Background(), &url.Error{Op: "Get", URL: "http://nova.internal:8774/v2.1/flavors", Err: io.EOF}, "Unavailable", "connection closed before an answer"},
		{"unresolvable", context.Background(), &url.Error{Op: "Get", URL: "http://nova.internal:8774/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "nova.internal", Err: "no such host"}}}, "Unavailable", "does not resolve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := apiError(tt.ctx, "image", "get image", "the request's user token", tt.err)
			if got := class(err); got != tt.class {
				t.Fatalf("class %s, want %s: %v", got, tt.class, err)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("error %q does not say %q", err, tt.text)
			}
			// Unavailable reaches tenants: no endpoint URL or host name.
			if tt.class == "Unavailable" && (strings.Contains(err.Error(), "nova.internal") || strings.Contains(err.Error(), "http://")) {
				t.Fatalf("error %q names the endpoint", err)
			}
			var missing *gophercloud.ErrEndpointNotFound
			if !errors.As(tt.err, &missing) && !errors.Is(err, tt.err) && !errors.As(err, new(gophercloud.ErrUnexpectedResponseCode)) {
				t.Fatalf("cause not reachable through %v", err)
			}
		})
	}
}

func TestRemoteMessageIsShortAndPlain(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct{ body, want string }{
		{`{"itemNotFound": {"code": 404, "message": "Flavor 9 could not be found."}}`, "Flavor 9 could not be found."},
		{`{"NeutronError": {"type": "NetworkNotFound", "message": "Network n could not be found.", "detail": ""}}`, "Network n could not be found."},
		{"<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>", "503 Service Unavailable No server is available to handle this request."},
		{`{"error": {"message": "` + long + `"}}`, strings.Repeat("x", maxMessage) + "..."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := remoteMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("remoteMessage(%.40q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
