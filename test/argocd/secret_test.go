package argocd

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"testing"

	"github.com/argoproj/argo-cd/v2/util/db"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// golden is the Secret the driver builds for a cluster "prod" with node
// groups default-master, default-worker and gpu, in project "platform".
const golden = "../../server/clusters/testdata/argocd-cluster-secret.json"

func TestArgoCDReadsTheSecret(t *testing.T) {
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Labels["argocd.argoproj.io/secret-type"] != "cluster" {
		t.Fatalf("Argo CD only reads Secrets labelled argocd.argoproj.io/secret-type=cluster; labels %v", s.Labels)
	}
	c, err := db.SecretToCluster(&s)
	if err != nil {
		t.Fatalf("Argo CD cannot read the Secret: %v", err)
	}
	for _, f := range []struct{ what, got, want string }{
		{"name", c.Name, "prod-abcdefghijkl"},
		{"server", c.Server, "https://203.0.113.10:6443"},
		{"project", c.Project, "platform"},
		{"caData", pemType(c.Config.TLSClientConfig.CAData), "CERTIFICATE"},
		{"certData", pemType(c.Config.TLSClientConfig.CertData), "CERTIFICATE"},
		{"keyData", pemType(c.Config.TLSClientConfig.KeyData), "PRIVATE KEY"},
		{"bearerToken", c.Config.BearerToken, ""},
		// What an ApplicationSet cluster generator selects on and
		// templates with (metadata.labels, metadata.annotations).
		{"label project-id", c.Labels["magnum.openstack.org/project-id"], "0c4e939acacf4376bdcd1129f1a054ad"},
		{"label cluster-template-uuid", c.Labels["magnum.openstack.org/cluster-template-uuid"], "e2a6b11a-37d1-4ee4-9c32-a8e11d3b3f7a"},
		{"label tenant's cluster-name", c.Labels["tenant.magnum-capi.io/cluster-name"], "prod"},
		{"label tenant's cluster-template", c.Labels["tenant.magnum-capi.io/cluster-template"], "k8s-1.33"},
		{"label tenant's node group gpu", c.Labels["node-group.tenant.magnum-capi.io/gpu"], "worker"},
		{"annotation node-groups", c.Annotations["tenant.magnum-capi.io/node-groups"], "default-master,default-worker,gpu"},
	} {
		if f.got != f.want {
			t.Errorf("Argo CD reads %s %q, want %q", f.what, f.got, f.want)
		}
	}
	if c.Config.TLSClientConfig.Insecure {
		t.Error("Argo CD would not verify the cluster's certificate")
	}
	rc, err := c.RESTConfig()
	if err != nil {
		t.Fatalf("Argo CD cannot make a client configuration of it: %v", err)
	}
	if rc.Host != "https://203.0.113.10:6443" || rc.Insecure {
		t.Errorf("Argo CD would connect to %s (insecure %v)", rc.Host, rc.Insecure)
	}
	// RESTConfig built Argo CD's transport from its raw configuration; the
	// TLS configuration client-go makes of that: the client certificate is
	// loaded and the CA is the one trusted.
	raw, err := c.RawRestConfig()
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := rest.TLSConfigFor(raw)
	if err != nil {
		t.Fatalf("client-go cannot load Argo CD's TLS configuration: %v", err)
	}
	if tlsCfg == nil || tlsCfg.GetClientCertificate == nil || tlsCfg.RootCAs == nil {
		t.Fatalf("no client certificate or CA in the TLS configuration %+v", tlsCfg)
	}
	// What the TLS handshake presents.
	cert, err := tlsCfg.GetClientCertificate(&tls.CertificateRequestInfo{})
	if err != nil || cert == nil || len(cert.Certificate) == 0 {
		t.Fatalf("client-go presents no client certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Subject.CommonName != "kubernetes-admin" {
		t.Errorf("client certificate of %q, want kubernetes-admin", leaf.Subject.CommonName)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: tlsCfg.RootCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: leaf.NotBefore}); err != nil {
		t.Errorf("the client certificate Argo CD presents does not verify against the CA it trusts: %v", err)
	}
}

// pemType is the type of the one PEM block in b ("" if none).
func pemType(b []byte) string {
	block, rest := pem.Decode(b)
	if block == nil || len(rest) > 0 {
		return ""
	}
	return block.Type
}
