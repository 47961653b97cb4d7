package certs_test

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
)

type fixture struct {
	auth   certs.Authorities
	ca     certstest.CA
	saCert *x509.Certificate
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	auth, ca, err := certstest.Authorities("mycluster")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(auth.ServiceAccount.Certificate)
	saCert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{auth: auth, ca: ca, saCert: saCert}
}

var owner = certs.Owner{
	Namespace: "magnum-0123456789abcdef0123456789abcdef", StackID: "mycluster-abcdefghijkl",
	ClusterUUID: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52", ProjectID: "0123456789abcdef0123456789abcdef", UserID: "fedcba9876543210fedcba9876543210",
}

func TestSecrets(t *testing.T) {
	f := newFixture(t)
	secrets, err := certs.Secrets(f.auth, owner)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		pair certs.KeyPair
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
	if !pub.(*rsa.PublicKey).Equal(f.saCert.PublicKey) {
		t.Error("sa tls.crt is not the public key of Magnum's client certificate")
	}
}

// TestClusterConfigCertificateVerifies is what `openstack coe cluster config`
// relies on: a client certificate Magnum signs with its stored CA verifies
// against the CA Cluster API will install on the control plane.
func TestClusterConfigCertificateVerifies(t *testing.T) {
	f := newFixture(t)
	secrets, err := certs.Secrets(f.auth, owner)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(secrets[0].Data["tls.crt"]) {
		t.Fatal("the -ca Secret's tls.crt holds no certificate")
	}
	_, client, err := f.ca.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("a certificate signed by Magnum's CA does not verify against <name>-ca: %v", err)
	}
	// And one signed by another CA does not.
	other, err := certstest.NewCA("other")
	if err != nil {
		t.Fatal(err)
	}
	_, stranger, err := other.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a certificate from another CA verified")
	}
}

func TestSecretsRejectsUnusableMaterial(t *testing.T) {
	f := newFixture(t)
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	tests := []struct {
		name      string
		mutate    func(*certs.Authorities)
		wantField string
		wantIn    string
	}{
		{"empty CA certificate", func(a *certs.Authorities) { a.CA.Certificate = nil }, "certificates.ca.certificate", "no PEM block"},
		{"garbage etcd certificate", func(a *certs.Authorities) {
			a.EtcdCA.Certificate = []byte("-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")
		}, "certificates.etcd_ca.certificate", ""},
		{"key in place of certificate", func(a *certs.Authorities) { a.CA.Certificate = a.CA.PrivateKey }, "certificates.ca.certificate", "type CERTIFICATE"},
		{"encrypted key", func(a *certs.Authorities) { a.FrontProxyCA.PrivateKey = encrypted }, "certificates.front_proxy_ca.private_key", "encrypted"},
		{"key of another pair", func(a *certs.Authorities) { a.EtcdCA.PrivateKey = a.CA.PrivateKey }, "certificates.etcd_ca", "does not belong"},
		{"client certificate as a CA", func(a *certs.Authorities) { a.CA = a.ServiceAccount }, "certificates.ca.certificate", "not a CA"},
		{"missing service-account key", func(a *certs.Authorities) { a.ServiceAccount.PrivateKey = nil }, "certificates.service_account.private_key", "no PEM block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.auth
			tt.mutate(&a)
			secrets, err := certs.Secrets(a, owner)
			if secrets != nil {
				t.Errorf("returned %d secrets with an error", len(secrets))
			}
			var invalid *certs.InvalidError
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
