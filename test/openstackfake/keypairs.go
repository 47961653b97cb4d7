package openstackfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Keypair is a Nova key pair; key pairs belong to users, not projects.
type Keypair struct {
	Name        string
	UserID      string
	PublicKey   string
	Fingerprint string
	CreatedAt   time.Time
	id          int
}

// AddKeypair registers a key pair for a user, with its fingerprint computed
// as Nova does; the public key must parse.
func (s *Server) AddKeypair(k Keypair) (Keypair, error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
	if err != nil {
		return Keypair{}, err
	}
	k.Fingerprint = ssh.FingerprintLegacyMD5(pub)
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now().UTC()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextKeypairID++
	k.id = s.nextKeypairID
	s.keypairs = append(s.keypairs, k)
	return k, nil
}

func (s *Server) routeKeypairs(mux *http.ServeMux) {
	mux.HandleFunc("GET /compute/v2.1/os-keypairs", s.listKeypairs)
	mux.HandleFunc("POST /compute/v2.1/os-keypairs", s.createKeypair)
	mux.HandleFunc("GET /compute/v2.1/os-keypairs/{name}", s.showKeypair)
	mux.HandleFunc("DELETE /compute/v2.1/os-keypairs/{name}", s.deleteKeypair)
}

// keypairName is Nova's rule (nova/api/validation/parameter_types.py
// keypair_name_special_chars for 2.1: letters, digits, space, '_', '-',
// '.', '@'), 1 to 255 characters.
var keypairName = regexp.MustCompile(`^[a-zA-Z0-9 _.@-]{1,255}$`)

func (s *Server) findKeypair(user, name string) (Keypair, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keypairs {
		if k.UserID == user && k.Name == name {
			return k, true
		}
	}
	return Keypair{}, false
}

// renderKeypair fills a recorded answer of Nova's with a key pair.
func renderKeypair(fixtureName string, k Keypair) map[string]any {
	body := object(fixtureName, map[string]string{"name": "", "user_id": ""})
	m := body["keypair"].(map[string]any)
	m["name"], m["user_id"] = k.Name, k.UserID
	m["public_key"], m["fingerprint"] = k.PublicKey, k.Fingerprint
	if _, ok := m["created_at"]; ok {
		m["created_at"] = k.CreatedAt.Format("2006-01-02T15:04:05.000000")
		m["id"] = k.id
	}
	return body
}

func (s *Server) listKeypairs(w http.ResponseWriter, r *http.Request) {
	user := tokenFrom(r).UserID
	s.mu.Lock()
	var mine []Keypair
	for _, k := range s.keypairs {
		if k.UserID == user {
			mine = append(mine, k)
		}
	}
	s.mu.Unlock()
	items := []any{}
	for _, k := range mine {
		item := renderKeypair("nova-keypair-create.json", k)
		delete(item["keypair"].(map[string]any), "user_id") // the list has no user_id at 2.1
		items = append(items, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"keypairs": items})
}

func (s *Server) showKeypair(w http.ResponseWriter, r *http.Request) {
	tok, name := tokenFrom(r), r.PathValue("name")
	k, ok := s.findKeypair(tok.UserID, name)
	if !ok {
		writeNovaError(w, http.StatusNotFound, "itemNotFound", "Keypair "+name+" not found for user "+tok.UserID)
		return
	}
	writeJSON(w, http.StatusOK, renderKeypair("nova-keypair-show.json", k))
}

// createKeypair imports a public key, or generates a key pair and returns
// its private key once, as Nova 2.1 does.
func (s *Server) createKeypair(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Keypair struct {
			Name      string `json:"name"`
			PublicKey string `json:"public_key"`
		} `json:"keypair"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Malformed request body")
		return
	}
	name, user := body.Keypair.Name, tokenFrom(r).UserID
	if !keypairName.MatchString(name) || strings.TrimSpace(name) == "" {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Invalid input for field/attribute name. Value: "+name+". '"+name+"' does not match '^[a-zA-Z0-9 _.@-]+$'")
		return
	}
	if _, exists := s.findKeypair(user, name); exists {
		writeNovaError(w, http.StatusConflict, "conflictingRequest", "Key pair '"+name+"' already exists.")
		return
	}
	var private string
	public := body.Keypair.PublicKey
	if public == "" {
		var err error
		if public, private, err = generateKeypair(); err != nil {
			writeFailure(w, ComputeService, http.StatusInternalServerError)
			return
		}
	}
	k, err := s.AddKeypair(Keypair{Name: name, UserID: user, PublicKey: strings.TrimSpace(public)})
	if err != nil {
		writeNovaError(w, http.StatusBadRequest, "badRequest", "Keypair data is invalid: failed to generate fingerprint")
		return
	}
	out := renderKeypair("nova-keypair-create.json", k)
	if private != "" {
		out["keypair"].(map[string]any)["private_key"] = private
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) deleteKeypair(w http.ResponseWriter, r *http.Request) {
	tok, name := tokenFrom(r), r.PathValue("name")
	s.mu.Lock()
	for i, k := range s.keypairs {
		if k.UserID == tok.UserID && k.Name == name {
			s.keypairs = append(s.keypairs[:i], s.keypairs[i+1:]...)
			s.mu.Unlock()
			w.Header().Set("X-Openstack-Request-Id", "req-"+newUUID())
			w.WriteHeader(http.StatusAccepted)
			return
		}
	}
	s.mu.Unlock()
	writeNovaError(w, http.StatusNotFound, "itemNotFound", "Keypair "+name+" not found for user "+tok.UserID)
}

// generateKeypair is Nova's generate_key_pair: RSA 2048, the private key in
// the traditional OpenSSL PEM format, the public key with Nova's comment.
func generateKeypair() (public, private string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	public = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " Generated-by-Nova"
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return public, private, nil
}

// writeNovaError is Nova's fault envelope, {"<kind>": {"code", "message"}},
// as in the recorded nova-404.json.
func writeNovaError(w http.ResponseWriter, status int, kind, message string) {
	writeJSON(w, status, map[string]any{kind: map[string]any{"code": status, "message": message}})
}
