package openstackfake

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"golang.org/x/crypto/ssh"
)

// What Magnum's API and the openstack CLI call: key pair import,
// generation, show (Magnum validates a template's and a cluster's keypair
// by name), list and delete, each only for the key pair's own user.
func TestKeypairs(t *testing.T) {
	ctx := context.Background()
	s := NewT(t)
	nova := func(tok Token) *gophercloud.ServiceClient {
		c, err := openstack.NewComputeV2(client(t, s, tok), gophercloud.EndpointOpts{Region: "RegionOne"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice := nova(Token{ID: "token-alice", UserID: "alice", ProjectID: projectA})
	bob := nova(Token{ID: "token-bob", UserID: "bob", ProjectID: projectA})

	generated, err := keypairs.Create(ctx, alice, keypairs.CreateOpts{Name: "generated"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(generated.PrivateKey, "BEGIN RSA PRIVATE KEY") || generated.UserID != "alice" {
		t.Errorf("generated key pair: %+v", generated)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(generated.PublicKey))
	if err != nil || generated.Fingerprint != ssh.FingerprintLegacyMD5(pub) {
		t.Errorf("fingerprint %q of %q: %v", generated.Fingerprint, generated.PublicKey, err)
	}
	imported, err := keypairs.Create(ctx, alice, keypairs.CreateOpts{Name: "mine", PublicKey: generated.PublicKey}).Extract()
	if err != nil || imported.PrivateKey != "" || imported.Fingerprint != generated.Fingerprint {
		t.Fatalf("import: %+v %v", imported, err)
	}
	for _, tc := range []struct {
		name   string
		opts   keypairs.CreateOpts
		status int
	}{
		{"same name again", keypairs.CreateOpts{Name: "mine", PublicKey: generated.PublicKey}, http.StatusConflict},
		{"bad name", keypairs.CreateOpts{Name: "no/slash"}, http.StatusBadRequest},
		{"bad key", keypairs.CreateOpts{Name: "bad", PublicKey: "ssh-rsa nonsense"}, http.StatusBadRequest},
	} {
		err := keypairs.Create(ctx, alice, tc.opts).Err
		if !gophercloud.ResponseCodeIs(err, tc.status) {
			t.Errorf("%s: %v, want %d", tc.name, err, tc.status)
		}
	}
	shown, err := keypairs.Get(ctx, alice, "mine", nil).Extract()
	if err != nil || shown.Name != "mine" || shown.UserID != "alice" {
		t.Fatalf("show: %+v %v", shown, err)
	}
	if err := keypairs.Get(ctx, bob, "mine", nil).Err; !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("another user's key pair: %v, want 404", err)
	}
	pages, err := keypairs.List(alice, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := keypairs.ExtractKeyPairs(pages)
	if len(all) != 2 {
		t.Errorf("list: %d key pairs, want 2", len(all))
	}
	if err := keypairs.Delete(ctx, alice, "mine", nil).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := keypairs.Delete(ctx, alice, "mine", nil).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("second delete: %v, want 404", err)
	}
}

// The version documents and the image schema clients read before anything
// else: glanceclient builds its image model from the schema (without it
// Magnum reads os_distro as "Unset"), novaclient reads GET /v2.1.
func TestDocumentsClientsReadFirst(t *testing.T) {
	s := NewT(t)
	tok := Token{ID: "token-a", UserID: "user-a", ProjectID: projectA}
	s.AcceptToken(tok)
	get := func(path string, auth bool) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		if auth {
			req.Header.Set("X-Auth-Token", tok.ID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, body := get("/image/v2/schemas/image", true); code != http.StatusOK || body["name"] != "image" ||
		body["properties"].(map[string]any)["os_distro"] == nil {
		t.Errorf("image schema: %d %v", code, body)
	}
	if code, body := get("/compute/v2.1", false); code != http.StatusOK || body["version"].(map[string]any)["id"] != "v2.1" {
		t.Errorf("compute version: %d %v", code, body)
	}
	if code, _ := get("/image", false); code != http.StatusMultipleChoices {
		t.Errorf("GET /image: %d, want 300", code)
	}
	fl := s.AddFlavor(Flavor{Name: "m1.small", RAM: 2048, VCPUs: 1, Disk: 20})
	if code, body := get("/compute/v2.1/flavors/"+fl.ID+"/os-extra_specs", true); code != http.StatusOK || body["extra_specs"] == nil {
		t.Errorf("extra specs: %d %v", code, body)
	}
	gpu := s.AddFlavor(Flavor{Name: "g1.large", RAM: 16384, VCPUs: 4, Disk: 40, ExtraSpecs: map[string]string{"resources:VGPU": "1"}})
	if code, body := get("/compute/v2.1/flavors/"+gpu.ID+"/os-extra_specs", true); code != http.StatusOK ||
		!reflect.DeepEqual(body["extra_specs"], map[string]any{"resources:VGPU": "1"}) {
		t.Errorf("GPU flavor's extra specs: %d %v", code, body)
	}
}
