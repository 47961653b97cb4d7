// Package certstest makes CA material the way Magnum does, for tests: RSA
// CAs with CA:TRUE and a client certificate (CN=admin, O=system:masters)
// signed by the cluster CA, keys in PKCS#8 as the shim sends them once
// decrypted.
package certstest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"time"

	"github.com/magnum-capi/magnum-capi/certs"
)

// CA is a generated CA with its parsed certificate and key.
type CA struct {
	Pair certs.KeyPair
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA makes a self-signed CA named name.
func NewCA(name string) (CA, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return CA{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
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
		return CA{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return CA{}, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return CA{}, err
	}
	return CA{Pair: certs.KeyPair{Certificate: pemBlock("CERTIFICATE", der), PrivateKey: pemBlock("PRIVATE KEY", pkcs8)}, Cert: cert, Key: key}, nil
}

// ClientCert signs a client certificate as Magnum's sign_certificate does for
// `openstack coe cluster config`.
func (ca CA) ClientCert(commonName string, orgs ...string) (certs.KeyPair, *x509.Certificate, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return certs.KeyPair{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return certs.KeyPair{}, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return certs.KeyPair{}, nil, err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return certs.KeyPair{}, nil, err
	}
	return certs.KeyPair{Certificate: pemBlock("CERTIFICATE", der), PrivateKey: pemBlock("PRIVATE KEY", pkcs8)}, cert, nil
}

// Authorities is a complete set for one cluster, and its cluster CA.
func Authorities(name string) (certs.Authorities, CA, error) {
	var a certs.Authorities
	ca, err := NewCA(name)
	if err != nil {
		return a, CA{}, err
	}
	etcd, err := NewCA(name)
	if err != nil {
		return a, CA{}, err
	}
	proxy, err := NewCA(name)
	if err != nil {
		return a, CA{}, err
	}
	sa, _, err := ca.ClientCert("admin", "system:masters")
	if err != nil {
		return a, CA{}, err
	}
	return certs.Authorities{CA: ca.Pair, EtcdCA: etcd.Pair, FrontProxyCA: proxy.Pair, ServiceAccount: sa}, ca, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
