package server

import (
	"testing"

	"sigs.k8s.io/cluster-api/util/secret"

	"github.com/magnum-capi/magnum-capi/certs"
)

// TestCertificateNamesMatchClusterAPI keeps the pure certs package's names in
// step with Cluster API's own (which certs may not import: CAPI's secret
// package pulls in controller-runtime).
func TestCertificateNamesMatchClusterAPI(t *testing.T) {
	pairs := []struct {
		ours   certs.Purpose
		theirs secret.Purpose
	}{
		{certs.ClusterCA, secret.ClusterCA},
		{certs.EtcdCA, secret.EtcdCA},
		{certs.FrontProxyCA, secret.FrontProxyCA},
		{certs.ServiceAccount, secret.ServiceAccount},
	}
	for _, p := range pairs {
		if got, want := certs.SecretName("c1", p.ours), secret.Name("c1", p.theirs); got != want {
			t.Errorf("certs.SecretName = %q, Cluster API names it %q", got, want)
		}
	}
	if string(certs.SecretType) != string("cluster.x-k8s.io/secret") {
		t.Errorf("SecretType = %q", certs.SecretType)
	}
	if certs.CertificateKey != secret.TLSCrtDataName || certs.PrivateKeyKey != secret.TLSKeyDataName {
		t.Errorf("data keys %q/%q, Cluster API uses %q/%q", certs.CertificateKey, certs.PrivateKeyKey, secret.TLSCrtDataName, secret.TLSKeyDataName)
	}
}
