package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// KeyPair is one PEM certificate and its PEM private key, decrypted.
type KeyPair struct {
	Certificate []byte
	PrivateKey  []byte
}

// parsed is a KeyPair checked for use.
type parsed struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// parse decodes the pair and checks the key belongs to the certificate.
// field prefixes every error, e.g. "certificates.ca".
func (kp KeyPair) parse(field string) (parsed, error) {
	cert, err := parseCertificate(kp.Certificate)
	if err != nil {
		return parsed{}, &InvalidError{Field: field + ".certificate", Reason: err.Error()}
	}
	key, err := parsePrivateKey(kp.PrivateKey)
	if err != nil {
		return parsed{}, &InvalidError{Field: field + ".private_key", Reason: err.Error()}
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return parsed{}, &InvalidError{Field: field, Reason: "the private key does not belong to the certificate"}
	}
	return parsed{cert: cert, key: key}, nil
}

func parseCertificate(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("expected a PEM certificate, found no PEM block")
	}
	if block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("expected a PEM block of type CERTIFICATE, found %q", block.Type)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not an X.509 certificate: %v", err)
	}
	return cert, nil
}

// parsePrivateKey accepts what Magnum's cert managers hand out once decrypted
// (PKCS#8) and what CAPI itself writes (PKCS#1, SEC 1), the same set CAPI's
// DecodePrivateKeyPEM reads back. Encrypted keys are refused: the shim must
// decrypt them with Magnum's passphrase first.
func parsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("expected a PEM private key, found no PEM block")
	}
	if block.Type == "ENCRYPTED PRIVATE KEY" || block.Headers["Proc-Type"] != "" {
		return nil, errors.New("the private key is encrypted; send it decrypted")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if signer, ok := k.(crypto.Signer); ok {
			return signer, nil
		}
		return nil, errors.New("the private key cannot sign")
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key in a PEM block of type %q (want PKCS#1, PKCS#8 or EC)", block.Type)
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	switch ak := a.(type) {
	case *rsa.PublicKey:
		return ak.Equal(b)
	case *ecdsa.PublicKey:
		return ak.Equal(b)
	case ed25519.PublicKey:
		return ak.Equal(b)
	}
	return false
}

// publicKeyPEM is the PKIX public key, the form CAPI writes as the
// service-account Secret's tls.crt (kube-apiserver's sa.pub).
func publicKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := pem.Encode(&buf, &pem.Block{Type: "PUBLIC KEY", Bytes: der}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
