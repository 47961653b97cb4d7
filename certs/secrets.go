package certs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Purpose is the suffix of a CAPI certificate Secret's name. The values are
// Cluster API's (util/secret: ClusterCA, EtcdCA, FrontProxyCA, ServiceAccount);
// server/certs_contract_test.go checks they never drift.
type Purpose string

const (
	ClusterCA      Purpose = "ca"
	EtcdCA         Purpose = "etcd"
	FrontProxyCA   Purpose = "proxy"
	ServiceAccount Purpose = "sa"
)

// SecretType is the type CAPI gives (and looks for on) its certificate Secrets.
const SecretType corev1.SecretType = "cluster.x-k8s.io/secret"

// Keys inside a certificate Secret.
const (
	CertificateKey = "tls.crt"
	PrivateKeyKey  = "tls.key"
)

// SecretName is CAPI's "<cluster>-<purpose>".
func SecretName(stackID string, p Purpose) string { return stackID + "-" + string(p) }

// Authorities is a cluster's CA material as Magnum generated it.
type Authorities struct {
	// CA is the cluster CA: it signs the API server's and every client's
	// certificate, including those `openstack coe cluster config` makes.
	CA KeyPair
	// EtcdCA signs etcd's peer and client certificates.
	EtcdCA KeyPair
	// FrontProxyCA signs the aggregation layer's client certificate.
	FrontProxyCA KeyPair
	// ServiceAccount is Magnum's client certificate and key; the key signs
	// service-account tokens (Magnum generates no separate SA key).
	ServiceAccount KeyPair
}

// Secrets checks the material and returns the four Secrets, in a stable order.
// Nothing is returned unless all four are usable, so a caller never applies a
// partial set.
func Secrets(a Authorities, owner Owner) ([]*corev1.Secret, error) {
	type source struct {
		purpose Purpose
		pair    KeyPair
		field   string
		needCA  bool
	}
	sources := []source{
		{ClusterCA, a.CA, "certificates.ca", true},
		{EtcdCA, a.EtcdCA, "certificates.etcd_ca", true},
		{FrontProxyCA, a.FrontProxyCA, "certificates.front_proxy_ca", true},
		{ServiceAccount, a.ServiceAccount, "certificates.service_account", false},
	}
	secrets := make([]*corev1.Secret, 0, len(sources))
	for _, s := range sources {
		p, err := s.pair.parse(s.field)
		if err != nil {
			return nil, err
		}
		if s.needCA && !p.cert.IsCA {
			return nil, &InvalidError{Field: s.field + ".certificate", Reason: "is not a CA certificate (basicConstraints CA:FALSE)"}
		}
		crt := s.pair.Certificate
		if s.purpose == ServiceAccount {
			// kube-apiserver reads tls.crt as sa.pub: write the public key,
			// as CAPI does for the key pairs it generates itself.
			if crt, err = publicKeyPEM(p.key); err != nil {
				return nil, &InvalidError{Field: s.field + ".private_key", Reason: err.Error()}
			}
		}
		secrets = append(secrets, &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      SecretName(owner.StackID, s.purpose),
				Namespace: owner.Namespace,
				Labels:    owner.certificateLabels(),
			},
			Type: SecretType,
			Data: map[string][]byte{
				CertificateKey: crt,
				PrivateKeyKey:  s.pair.PrivateKey,
			},
		})
	}
	return secrets, nil
}
