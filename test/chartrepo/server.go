package chartrepo

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"
)

// server serves a handler on one 127.0.0.1 port that it keeps across going
// offline and online again, so URLs handed out stay valid. Offline, nothing
// listens on the port: clients get "connection refused", as from a repository
// that is down.
type server struct {
	handler   http.Handler
	tlsConfig *tls.Config // nil: plain HTTP
	addr      string

	mu       sync.Mutex
	http     *http.Server // nil while offline
	requests map[string]int
	closed   bool
}

func startServer(handler http.Handler, tlsConfig *tls.Config) (*server, error) {
	s := &server{tlsConfig: tlsConfig, requests: map[string]int{}}
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		handler.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	return s, nil
}

// serve starts serving on ln; the caller holds mu or is the constructor.
func (s *server) serve(ln net.Listener) {
	if s.tlsConfig != nil {
		ln = tls.NewListener(ln, s.tlsConfig)
	}
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.http = srv
	go func() { _ = srv.Serve(ln) }()
}

// setOnline stops or resumes listening on the server's port. Going offline
// also drops open connections, so kept-alive clients notice at once.
func (s *server) setOnline(online bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the server is closed")
	}
	switch {
	case online && s.http == nil:
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			return fmt.Errorf("listening on %s again: %w", s.addr, err)
		}
		s.serve(ln)
	case !online && s.http != nil:
		err := s.http.Close()
		s.http = nil
		if err != nil {
			return fmt.Errorf("stopping the server on %s: %w", s.addr, err)
		}
	}
	return nil
}

// requestCount is how many requests reached path (whatever their outcome).
func (s *server) requestCount(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// requestCounts is a copy of the request count of every path.
func (s *server) requestCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
}

func (s *server) close() error {
	err := s.setOnline(false)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}
