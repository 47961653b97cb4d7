package openstackfake

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

type tokenKey struct{}

func withToken(ctx context.Context, t Token) context.Context {
	return context.WithValue(ctx, tokenKey{}, t)
}

func tokenFrom(r *http.Request) Token {
	t, _ := r.Context().Value(tokenKey{}).(Token)
	return t
}

// authenticate returns the request's token and 200, or 401 for a missing or
// unknown token, or 503 when Keystone cannot be asked.
func (s *Server) authenticate(r *http.Request) (Token, int) {
	id := r.Header.Get("X-Auth-Token")
	if id == "" {
		return Token{}, http.StatusUnauthorized
	}
	s.mu.Lock()
	tok, ok := s.tokens[id]
	ks := s.keystone
	s.mu.Unlock()
	if ok {
		if time.Now().After(tok.ExpiresAt) {
			return Token{}, http.StatusUnauthorized
		}
		return tok, http.StatusOK
	}
	if ks == nil {
		return Token{}, http.StatusUnauthorized
	}
	return ks.validate(r.Context(), id)
}

// keystoneValidator asks Keystone about tokens and remembers the answers for
// a short while, as keystonemiddleware's token cache does. A token validates
// itself (policy identity:validate_token allows the token's own user), so
// the fake needs no service credentials. Concurrent requests with the same
// uncached token share one validation: a deployment's many API workers and
// Keystone processes absorb a burst of new tokens that the test Keystone,
// one uWSGI worker, would otherwise queue for longer than the sidecar's
// OpenStack timeout (200 creates at once with one token: 800 validations).
type keystoneValidator struct {
	authURL string
	client  *http.Client
	asking  singleflight.Group

	mu    sync.Mutex
	cache map[[32]byte]cachedToken // by sha256 of the token, as keystonemiddleware keys its cache
}

type cachedToken struct {
	tok     Token
	status  int
	expires time.Time
}

// cacheFor bounds how stale a validation may be; tests that revoke or delete
// something wait no longer than this.
const cacheFor = 5 * time.Second

func newKeystoneValidator(authURL string) *keystoneValidator {
	return &keystoneValidator{
		authURL: authURL,
		client:  &http.Client{Timeout: 30 * time.Second},
		cache:   map[[32]byte]cachedToken{},
	}
}

func (v *keystoneValidator) validate(ctx context.Context, id string) (Token, int) {
	key := sha256.Sum256([]byte(id))
	v.mu.Lock()
	c, ok := v.cache[key]
	v.mu.Unlock()
	if ok && time.Now().Before(c.expires) {
		return c.tok, c.status
	}
	type answer struct {
		tok    Token
		status int
	}
	shared, _, _ := v.asking.Do(string(key[:]), func() (any, error) {
		// Not the caller's context: another caller may be waiting on it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), v.client.Timeout)
		defer cancel()
		tok, status := v.ask(ctx, id)
		return answer{tok, status}, nil
	})
	tok, status := shared.(answer).tok, shared.(answer).status
	if status != http.StatusServiceUnavailable {
		v.mu.Lock()
		v.cache[key] = cachedToken{tok: tok, status: status, expires: time.Now().Add(cacheFor)}
		v.mu.Unlock()
	}
	return tok, status
}

func (v *keystoneValidator) ask(ctx context.Context, id string) (Token, int) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.authURL+"/auth/tokens", nil)
	if err != nil {
		return Token{}, http.StatusServiceUnavailable
	}
	req.Header.Set("X-Auth-Token", id)
	req.Header.Set("X-Subject-Token", id)
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return Token{}, http.StatusServiceUnavailable
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode >= 500:
		return Token{}, http.StatusServiceUnavailable
	default: // 401, 403, 404: not a valid token
		return Token{}, http.StatusUnauthorized
	}
	var body struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
			User      struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"user"`
			Project *struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"project"`
			Roles []struct {
				Name string `json:"name"`
			} `json:"roles"`
		} `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return Token{}, http.StatusServiceUnavailable
	}
	t := Token{ID: id, UserID: body.Token.User.ID, UserName: body.Token.User.Name, ExpiresAt: keystoneTime(body.Token.ExpiresAt)}
	if p := body.Token.Project; p != nil {
		t.ProjectID, t.ProjectName = p.ID, p.Name
	}
	for _, r := range body.Token.Roles {
		t.Roles = append(t.Roles, r.Name)
	}
	return t, http.StatusOK
}

// keystoneTime reads a time as Keystone writes it: RFC 3339 with a zone,
// or with none (UTC) for a token an expiring application credential
// limits. Unreadable is zero, as keystonemiddleware treats no expiry.
func keystoneTime(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
