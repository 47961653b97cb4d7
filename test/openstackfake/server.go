package openstackfake

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:40123.
	URL string

	srv *httptest.Server

	mu               sync.Mutex
	images           []Image
	networks         []Network
	subnets          []Subnet
	floatingIPs      []FloatingIP
	volumeTypes      []VolumeType
	flavors          []Flavor
	keypairs         []Keypair
	nextKeypairID    int
	serverGroups     []ServerGroup
	serverGroupQuota int
	tokens           map[string]Token
	keystone         *keystoneValidator
	failures         map[Service]*Failure
	requests         []Request
}

// New starts a fake; Close stops it.
func New() *Server {
	s := &Server{tokens: map[string]Token{}, failures: map[Service]*Failure{}}
	mux := http.NewServeMux()
	s.routeIdentity(mux)
	s.routeGlance(mux)
	s.routeNeutron(mux)
	s.routeCinder(mux)
	s.routeNova(mux)
	s.routeKeypairs(mux)
	s.routeServerGroups(mux)
	// A request no route answers: what a real service would answer is
	// unknown, so it is recorded (Unrouted) for tests to fail on, and
	// answered 404 as an unknown URL of the service would be.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for i := len(s.requests) - 1; i >= 0; i-- {
			if s.requests[i].Method == r.Method && s.requests[i].Path == r.URL.RequestURI() {
				s.requests[i].Unrouted = true
				break
			}
		}
		s.mu.Unlock()
		writeNotFound(w, serviceOf(r.URL.Path), "resource", r.URL.Path)
	})
	s.srv = httptest.NewServer(s.middleware(mux))
	s.URL = s.srv.URL
	return s
}

// NewT starts a fake that stops when the test ends.
func NewT(t testing.TB) *Server {
	s := New()
	t.Cleanup(s.Close)
	return s
}

// Close stops the server; requests held by a Delay are released.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Endpoints are the catalog URLs by service type, for
// keystone.RegisterEndpoints. Cinder's carries Keystone's %(project_id)s.
func (s *Server) Endpoints() map[string]string {
	return map[string]string{
		string(ImageService):   s.URL + "/image",
		string(NetworkService): s.URL + "/networking",
		string(VolumeService):  s.URL + "/volume/v3/%(project_id)s",
		string(ComputeService): s.URL + "/compute/v2.1",
	}
}

// IdentityURL is the fake's own Keystone v3 URL; it only validates tokens
// registered with AcceptToken.
func (s *Server) IdentityURL() string { return s.URL + "/identity/v3" }

// AcceptToken makes the fake accept a token without asking Keystone.
func (s *Server) AcceptToken(t Token) {
	if t.UserName == "" {
		t.UserName = t.UserID
	}
	if t.ProjectName == "" {
		t.ProjectName = t.ProjectID
	}
	if t.Roles == nil {
		t.Roles = []string{"member", "reader"}
	}
	if t.ExpiresAt.IsZero() {
		t.ExpiresAt = time.Now().Add(time.Hour).UTC()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[t.ID] = t
}

// UseKeystone makes the fake validate tokens it does not know against a
// real Keystone (authURL ends in /v3), as keystonemiddleware does.
func (s *Server) UseKeystone(authURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keystone = newKeystoneValidator(authURL)
}

// Fail makes a service misbehave until Heal (or for f.Times requests).
func (s *Server) Fail(svc Service, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[svc] = &f
}

// Heal ends a service's failure.
func (s *Server) Heal(svc Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failures, svc)
}

// Requests counts the requests a service received, failed ones included.
func (s *Server) Requests(svc Service) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r.Service == svc {
			n++
		}
	}
	return n
}

// RequestLog is every request received so far, in order.
func (s *Server) RequestLog() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Unrouted are the requests no route of the fake answered: something a
// client called that the fake does not know.
func (s *Server) Unrouted() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Unrouted {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests forgets the requests received so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// serviceOf maps a path to its service by devstack's prefixes.
func serviceOf(path string) Service {
	for prefix, svc := range map[string]Service{
		"/identity/": IdentityService, "/image/": ImageService, "/networking/": NetworkService,
		"/volume/": VolumeService, "/compute/": ComputeService,
	} {
		if strings.HasPrefix(path+"/", prefix) {
			return svc
		}
	}
	return ""
}

// middleware records the request, applies an injected failure, then checks
// the token (version documents are public, as in the real services).
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc := serviceOf(r.URL.Path)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Service: svc, Method: r.Method, Path: r.URL.RequestURI()})
		failure := s.takeFailure(svc)
		s.mu.Unlock()

		if failure != nil {
			if failure.Delay > 0 {
				select {
				case <-time.After(failure.Delay):
				case <-r.Context().Done():
					return
				}
			}
			if failure.Drop {
				// net/http closes the connection without answering.
				panic(http.ErrAbortHandler)
			}
			if failure.Status != 0 {
				writeFailure(w, svc, failure.Status)
				return
			}
		}
		if isVersionDocument(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		tok, status := s.authenticate(r)
		if status != http.StatusOK {
			writeAuthError(w, status)
			return
		}
		next.ServeHTTP(w, r.WithContext(withToken(r.Context(), tok)))
	})
}

// takeFailure returns the service's failure and uses up one of its Times.
// The caller holds s.mu.
func (s *Server) takeFailure(svc Service) *Failure {
	f, ok := s.failures[svc]
	if !ok {
		return nil
	}
	copied := *f
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			delete(s.failures, svc)
		}
	}
	return &copied
}

func isVersionDocument(path string) bool {
	switch path {
	case "/image", "/image/", "/networking", "/networking/", "/identity/v3", "/identity/v3/", "/compute/v2.1", "/compute/v2.1/":
		return true
	}
	return false
}
