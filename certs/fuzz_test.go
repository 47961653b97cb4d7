package certs_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/magnum-capi/magnum-capi/certs"
)

// ecPair makes a self-signed P-256 certificate (a CA when ca) and its
// PKCS#8 key: the fuzz target's valid material. P-256 rather than Magnum's
// RSA 2048 keeps each execution cheap (an RSA key's checks take most of a
// millisecond); the parsing code paths are the same PEM, X.509 and PKCS#8.
func ecPair(f *testing.F, name string, ca bool) certs.KeyPair {
	f.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: ca, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		f.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		f.Fatal(err)
	}
	return certs.KeyPair{
		Certificate: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		PrivateKey:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
}

// FuzzSecrets feeds arbitrary certificate and key bytes (for one of the
// four pairs, or one pair's certificate with another's key) to Secrets, the
// one place Magnum's CA material is parsed. It never panics; it refuses
// with an InvalidError naming the certificates.* field, returning nothing,
// or returns the four Secrets named and labelled for the cluster, each with
// its certificate and key, the same on every call.
func FuzzSecrets(f *testing.F) {
	valid := certs.Authorities{
		CA: ecPair(f, "ca", true), EtcdCA: ecPair(f, "etcd", true),
		FrontProxyCA: ecPair(f, "proxy", true), ServiceAccount: ecPair(f, "admin", false),
	}
	for i, p := range []certs.KeyPair{valid.CA, valid.EtcdCA, valid.FrontProxyCA, valid.ServiceAccount} {
		f.Add(uint8(i), p.Certificate, p.PrivateKey)
		f.Add(uint8(i), p.Certificate[:len(p.Certificate)/2], p.PrivateKey)
		f.Add(uint8(i), p.PrivateKey, p.Certificate)
	}
	f.Add(uint8(0), valid.ServiceAccount.Certificate, valid.ServiceAccount.PrivateKey) // not a CA
	f.Add(uint8(1), valid.CA.Certificate, valid.EtcdCA.PrivateKey)                     // another's key
	f.Add(uint8(2), []byte("-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----\n"), []byte{})
	f.Add(uint8(3), []byte(nil), []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, which uint8, cert, key []byte) {
		in := valid
		pairs := []*certs.KeyPair{&in.CA, &in.EtcdCA, &in.FrontProxyCA, &in.ServiceAccount}
		*pairs[which%4] = certs.KeyPair{Certificate: cert, PrivateKey: key}
		secrets, err := certs.Secrets(in, owner)
		again, errAgain := certs.Secrets(in, owner)
		if (err == nil) != (errAgain == nil) || !reflect.DeepEqual(secrets, again) {
			t.Fatalf("two calls differ: %v / %v", err, errAgain)
		}
		if err != nil {
			var invalid *certs.InvalidError
			if !errors.As(err, &invalid) || !invalid.InvalidArgument() || !strings.HasPrefix(invalid.Field, "certificates.") || secrets != nil {
				t.Fatalf("refused with %T %v (and %d Secrets): want an InvalidError naming a certificates.* field and nothing returned", err, err, len(secrets))
			}
			return
		}
		if len(secrets) != 4 {
			t.Fatalf("%d Secrets, want 4", len(secrets))
		}
		for i, p := range []certs.Purpose{certs.ClusterCA, certs.EtcdCA, certs.FrontProxyCA, certs.ServiceAccount} {
			s := secrets[i]
			if s.Name != certs.SecretName(owner.StackID, p) || s.Namespace != owner.Namespace || s.Type != certs.SecretType {
				t.Fatalf("Secret %d is %s/%s of type %s", i, s.Namespace, s.Name, s.Type)
			}
			if block, _ := pem.Decode(s.Data[certs.CertificateKey]); block == nil || len(s.Data[certs.PrivateKeyKey]) == 0 {
				t.Fatalf("Secret %s lacks a PEM %s or a %s", s.Name, certs.CertificateKey, certs.PrivateKeyKey)
			}
		}
	})
}
