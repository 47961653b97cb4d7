package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/magnum-capi/magnum-capi/test/harness"
)

// sidecars runs magnum-capi serve processes on the stack for clients that
// are not Go (the Python tests, the demo), through harness.StartSidecar,
// the starter every Go test uses. They drive it over HTTP on 127.0.0.1:
//
//	POST   /sidecars/NAME  {"env": {"MAGNUM_CAPI_TIMEOUTS_UPDATE": "20s"}}
//	       starts sidecar NAME unless it runs; answers once it serves with
//	       {"name", "address", "log", "pid"}
//	DELETE /sidecars/NAME?signal=TERM|KILL
//	       stops it (TERM: drains, as an operator would; KILL: as a crash
//	       would) and answers once it has ended
type sidecars struct {
	h      *harness.Harness
	binary string

	mu      sync.Mutex
	running map[string]*harness.Sidecar
}

// validName is a sidecar's name: it names a directory of the stack's.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

// sidecarInfo is what a client needs of one sidecar.
type sidecarInfo struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Log     string `json:"log"`
	Pid     int    `json:"pid"`
}

func info(s *harness.Sidecar) sidecarInfo {
	return sidecarInfo{Name: s.Name, Address: "unix://" + s.Socket, Log: s.LogFile, Pid: s.Pid()}
}

// start starts sidecar name with env (MAGNUM_CAPI_* overrides), or returns
// the running one.
func (s *sidecars) start(ctx context.Context, name string, env map[string]string) (sidecarInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc := s.running[name]; sc != nil {
		return info(sc), nil
	}
	var vars []string
	for k, v := range env {
		if !strings.HasPrefix(k, "MAGNUM_CAPI_") {
			return sidecarInfo{}, fmt.Errorf("env %s: only MAGNUM_CAPI_* options may be overridden", k)
		}
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// One directory per name: a sidecar started again (after a stop or a
	// kill) listens at the same address and adds to the same log.
	dir := filepath.Join(s.h.Info.Dir, "sidecars", name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sidecarInfo{}, err
	}
	sc, err := s.h.StartSidecar(ctx, harness.SidecarOptions{Name: name, Dir: dir, Binary: s.binary, Env: vars})
	if err != nil {
		return sidecarInfo{}, err
	}
	s.running[name] = sc
	return info(sc), nil
}

// stop ends sidecar name; one that does not run is not an error.
func (s *sidecars) stop(name, signal string) error {
	s.mu.Lock()
	sc := s.running[name]
	delete(s.running, name)
	s.mu.Unlock()
	switch {
	case sc == nil:
		return nil
	case signal == "KILL":
		return sc.Kill()
	}
	_ = sc.Stop() // how a drained sidecar exits is not the client's concern
	return nil
}

// stopAll stops every sidecar (the stack is going down).
func (s *sidecars) stopAll() {
	s.mu.Lock()
	names := make([]string, 0, len(s.running))
	for name := range s.running {
		names = append(names, name)
	}
	s.mu.Unlock()
	for _, name := range names {
		_ = s.stop(name, "TERM")
	}
}

func (s *sidecars) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/sidecars/")
	if !ok || !validName.MatchString(name) {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		var body struct {
			Env map[string]string `json:"env"`
		}
		if r.ContentLength != 0 {
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		si, err := s.start(r.Context(), name, body.Env)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(si)
	case http.MethodDelete:
		if err := s.stop(name, r.URL.Query().Get("signal")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	default:
		http.Error(w, "POST or DELETE", http.StatusMethodNotAllowed)
	}
}

// serveSidecars serves the control API on a free 127.0.0.1 port until ctx
// ends, and returns its URL.
func serveSidecars(ctx context.Context, s *sidecars) (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + lis.Addr().String(), nil
}
