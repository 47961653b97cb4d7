package certs

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

// magnumCA makes a CA the way Magnum's x509 operations do: self-signed RSA,
// CA:TRUE, key in PKCS#8 (as the shim hands it over once decrypted).
func magnumCA(t *testing.T, name string) (KeyPair, *x509.Certificate, crypto.Signer) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(5 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return KeyPair{Certificate: pemBlock("CERTIFICATE", der), PrivateKey: pkcs8(t, key)}, cert, key
}

// clientCert signs a client certificate with the CA, as Magnum's
// sign_certificate does for `openstack coe cluster config` (CN=admin,
// O=system:masters).
func clientCert(t *testing.T, ca *x509.Certificate, caKey crypto.Signer) (KeyPair, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return KeyPair{Certificate: pemBlock("CERTIFICATE", der), PrivateKey: pkcs8(t, key)}, cert
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("PRIVATE KEY", der)
}

type fixture struct {
	auth   Authorities
	ca     *x509.Certificate
	caKey  crypto.Signer
	saCert *x509.Certificate
}

func newFixture(t *testing.T) fixture {
	ca, caCert, caKey := magnumCA(t, "mycluster")
	etcd, _, _ := magnumCA(t, "mycluster")
	proxy, _, _ := magnumCA(t, "mycluster")
	sa, saCert := clientCert(t, caCert, caKey)
	return fixture{auth: Authorities{CA: ca, EtcdCA: etcd, FrontProxyCA: proxy, ServiceAccount: sa}, ca: caCert, caKey: caKey, saCert: saCert}
}

var owner = Owner{
	Namespace: "magnum-0123456789abcdef0123456789abcdef", StackID: "mycluster-abcdefghijkl",
	ClusterUUID: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52", ProjectID: "0123456789abcdef0123456789abcdef", UserID: "fedcba9876543210fedcba9876543210",
}

func TestSecrets(t *testing.T) {
	f := newFixture(t)
	secrets, err := Secrets(f.auth, owner)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		pair KeyPair
	}{
		{"mycluster-abcdefghijkl-ca", f.auth.CA},
		{"mycluster-abcdefghijkl-etcd", f.auth.EtcdCA},
		{"mycluster-abcdefghijkl-proxy", f.auth.FrontProxyCA},
		{"mycluster-abcdefghijkl-sa", f.auth.ServiceAccount},
	}
	if len(secrets) != len(want) {
		t.Fatalf("got %d secrets, want %d", len(secrets), len(want))
	}
	for i, w := range want {
		s := secrets[i]
		if s.Name != w.name || s.Namespace != owner.Namespace {
			t.Errorf("secret %d = %s/%s, want %s/%s", i, s.Namespace, s.Name, owner.Namespace, w.name)
		}
		if s.Type != "cluster.x-k8s.io/secret" {
			t.Errorf("%s type = %q", s.Name, s.Type)
		}
		wantLabels := map[string]string{
			"magnum.openstack.org/project-id":   owner.ProjectID,
			"magnum.openstack.org/user-id":      owner.UserID,
			"magnum.openstack.org/cluster-uuid": owner.ClusterUUID,
			"cluster.x-k8s.io/cluster-name":     owner.StackID,
		}
		for k, v := range wantLabels {
			if s.Labels[k] != v {
				t.Errorf("%s label %s = %q, want %q", s.Name, k, s.Labels[k], v)
			}
		}
		if len(s.Labels) != len(wantLabels) {
			t.Errorf("%s labels = %v", s.Name, s.Labels)
		}
		if !bytes.Equal(s.Data["tls.key"], w.pair.PrivateKey) {
			t.Errorf("%s tls.key differs from the input key", s.Name)
		}
		if w.name != "mycluster-abcdefghijkl-sa" && !bytes.Equal(s.Data["tls.crt"], w.pair.Certificate) {
			t.Errorf("%s tls.crt differs from the input certificate", s.Name)
		}
	}
	// The service-account Secret holds the public half of the key that signs
	// tokens, as kube-apiserver's sa.pub.
	block, _ := pem.Decode(secrets[3].Data["tls.crt"])
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("sa tls.crt is not a PEM public key: %q", secrets[3].Data["tls.crt"])
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !publicKeysEqual(pub, f.saCert.PublicKey) {
		t.Error("sa tls.crt is not the public key of Magnum's client certificate")
	}
}

// TestClusterConfigCertificateVerifies is what `openstack coe cluster config`
// relies on: a client certificate Magnum signs with its stored CA verifies
// against the CA Cluster API will install on the control plane.
func TestClusterConfigCertificateVerifies(t *testing.T) {
	f := newFixture(t)
	secrets, err := Secrets(f.auth, owner)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secrets[0].Data["tls.crt"]) {
		t.Fatal("the -ca Secret's tls.crt holds no certificate")
	}
	_, client := clientCert(t, f.ca, f.caKey)
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("a certificate signed by Magnum's CA does not verify against <name>-ca: %v", err)
	}
	// And one signed by another CA does not.
	_, otherCA, otherKey := magnumCA(t, "other")
	_, stranger := clientCert(t, otherCA, otherKey)
	if _, err := stranger.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a certificate from another CA verified")
	}
}

func TestSecretsRejectsUnusableMaterial(t *testing.T) {
	f := newFixture(t)
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	tests := []struct {
		name      string
		mutate    func(*Authorities)
		wantField string
		wantIn    string
	}{
		{"empty CA certificate", func(a *Authorities) { a.CA.Certificate = nil }, "certificates.ca.certificate", "no PEM block"},
		{"garbage etcd certificate", func(a *Authorities) { a.EtcdCA.Certificate = []byte("-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n") }, "certificates.etcd_ca.certificate", ""},
		{"key in place of certificate", func(a *Authorities) { a.CA.Certificate = a.CA.PrivateKey }, "certificates.ca.certificate", "type CERTIFICATE"},
		{"encrypted key", func(a *Authorities) { a.FrontProxyCA.PrivateKey = encrypted }, "certificates.front_proxy_ca.private_key", "encrypted"},
		{"key of another pair", func(a *Authorities) { a.EtcdCA.PrivateKey = a.CA.PrivateKey }, "certificates.etcd_ca", "does not belong"},
		{"client certificate as a CA", func(a *Authorities) { a.CA = a.ServiceAccount }, "certificates.ca.certificate", "not a CA"},
		{"missing service-account key", func(a *Authorities) { a.ServiceAccount.PrivateKey = nil }, "certificates.service_account.private_key", "no PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.auth
			tt.mutate(&a)
			secrets, err := Secrets(a, owner)
			if secrets != nil {
				t.Errorf("returned %d secrets with an error", len(secrets))
			}
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("error = %v, want *InvalidError", err)
			}
			if invalid.Field != tt.wantField {
				t.Errorf("field = %q, want %q", invalid.Field, tt.wantField)
			}
			if !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("error %q does not say %q", err, tt.wantIn)
			}
			if !invalid.InvalidArgument() {
				t.Error("not classified as an invalid argument")
			}
			// Errors name PEM types but never echo a key's body.
			if strings.Contains(err.Error(), "MII") {
				t.Errorf("error echoes key material: %q", err)
			}
		})
	}
}

func TestLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"5d12f6fd-a196-4bf0-ae4c-1f639a523a52", "5d12f6fd-a196-4bf0-ae4c-1f639a523a52"},
		{strings.Repeat("a", 64), strings.Repeat("a", 63)},
		{"user@example.com", "user_example.com"},
		{"-x-", "x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := labelValue(tt.in); got != tt.want {
			t.Errorf("labelValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
