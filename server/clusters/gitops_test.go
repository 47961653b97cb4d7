package clusters

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

func gitopsSpec(clusterName string, nodeGroups ...string) Spec {
	spec := Spec{
		Cluster:  helmvalues.Cluster{UUID: "5d12f6fd-a196-4bf0-ae4c-1f639a523a52", Name: clusterName, ProjectID: "0c4e939acacf4376bdcd1129f1a054ad", StackID: "prod-abcdefghijkl"},
		Template: helmvalues.ClusterTemplate{UUID: "e2a6b11a-37d1-4ee4-9c32-a8e11d3b3f7a", Name: "k8s-1.33"},
	}
	for i, ng := range nodeGroups {
		role := "worker"
		if i == 0 {
			role = "master"
		}
		spec.NodeGroups = append(spec.NodeGroups, helmvalues.NodeGroup{Name: ng, Role: role})
	}
	return spec
}

// TestArgoCDSecret checks the Secret against Argo CD's documented format
// (declarative setup, "Clusters"); test/argocd decodes the same Secret with
// Argo CD's own code.
func TestArgoCDSecret(t *testing.T) {
	acc := kube.WorkloadAccess{Server: "https://203.0.113.10:6443", CAData: []byte("CA"), CertData: []byte("CERT"), KeyData: []byte("KEY")}
	long := strings.Repeat("a", 70)
	tests := []struct {
		name        string
		spec        Spec
		project     string
		labels      map[string]string
		annotations map[string]string
		absent      []string
	}{
		{"plain names", gitopsSpec("prod", "default-master", "default-worker", "gpu"), "",
			map[string]string{
				"argocd.argoproj.io/secret-type":                  "cluster",
				"app.kubernetes.io/managed-by":                    "magnum-capi",
				"magnum.openstack.org/project-id":                 "0c4e939acacf4376bdcd1129f1a054ad",
				"magnum.openstack.org/cluster-uuid":               "5d12f6fd-a196-4bf0-ae4c-1f639a523a52",
				"magnum.openstack.org/stack-id":                   "prod-abcdefghijkl",
				"magnum.openstack.org/cluster-template-uuid":      "e2a6b11a-37d1-4ee4-9c32-a8e11d3b3f7a",
				"tenant.magnum-capi.io/cluster-name":              "prod",
				"tenant.magnum-capi.io/cluster-template":          "k8s-1.33",
				"node-group.tenant.magnum-capi.io/gpu":            "worker",
				"node-group.tenant.magnum-capi.io/default-master": "master",
			},
			map[string]string{"tenant.magnum-capi.io/node-groups": "default-master,default-worker,gpu"},
			// Names tenants choose never land under a key a site may
			// already select on for facts Magnum assigns.
			[]string{"magnum.openstack.org/user-id", "magnum.openstack.org/cluster-name", "magnum.openstack.org/cluster-template",
				"node-group.magnum.openstack.org/gpu", "node-group.magnum.openstack.org/default-master"}},
		{"long and odd names are cut and kept whole in annotations", gitopsSpec(long, "default-master", "ng with space"), "team-a",
			map[string]string{"tenant.magnum-capi.io/cluster-name": strings.Repeat("a", 63)},
			map[string]string{"tenant.magnum-capi.io/cluster-name": long, "tenant.magnum-capi.io/node-groups": "default-master,ng with space"},
			[]string{"node-group.tenant.magnum-capi.io/ng_with_space", "node-group.tenant.magnum-capi.io/ng with space"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := argoCDSecret(tt.spec, acc, gitopsTarget{Namespace: "argocd", Project: tt.project})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "magnum-prod-abcdefghijkl" || s.Namespace != "argocd" {
				t.Errorf("secret %s/%s, want argocd/magnum-prod-abcdefghijkl", s.Namespace, s.Name)
			}
			for k, v := range s.Labels {
				for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
					t.Errorf("label %s=%q is not valid: %s", k, v, msg)
				}
			}
			for k, want := range tt.labels {
				if got := s.Labels[k]; got != want {
					t.Errorf("label %s = %q, want %q", k, got, want)
				}
			}
			for k, want := range tt.annotations {
				if got := s.Annotations[k]; got != want {
					t.Errorf("annotation %s = %q, want %q", k, got, want)
				}
			}
			for _, k := range tt.absent {
				if _, ok := s.Labels[k]; ok {
					t.Errorf("label %s is set, want none", k)
				}
			}
			if string(s.Data["server"]) != acc.Server || string(s.Data["name"]) != "prod-abcdefghijkl" || string(s.Data["project"]) != tt.project {
				t.Errorf("server %q name %q project %q", s.Data["server"], s.Data["name"], s.Data["project"])
			}
			// Argo CD's config: tlsClientConfig with base64 PEM.
			var cfg struct {
				BearerToken     string `json:"bearerToken"`
				TLSClientConfig struct {
					Insecure                  bool
					CAData, CertData, KeyData []byte
				} `json:"tlsClientConfig"`
			}
			if err := json.Unmarshal(s.Data["config"], &cfg); err != nil {
				t.Fatalf("config %s: %v", s.Data["config"], err)
			}
			if tls := cfg.TLSClientConfig; tls.Insecure || string(tls.CAData) != "CA" || string(tls.CertData) != "CERT" || string(tls.KeyData) != "KEY" || cfg.BearerToken != "" {
				t.Errorf("config = %s", s.Data["config"])
			}
		})
	}
}

func TestLabelSafe(t *testing.T) {
	tests := map[string]string{
		"prod":                         "prod",
		"k8s 1.33 (GPU)":               "k8s_1.33_GPU",
		"-edge-":                       "edge",
		"___":                          "",
		strings.Repeat("x", 62) + "-y": strings.Repeat("x", 62),
		"ünïcode":                      "n_code",
	}
	for in, want := range tests {
		if got := labelSafe(in); got != want {
			t.Errorf("labelSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGitOpsKey(t *testing.T) {
	a := gitopsKey(gitopsSpec("prod", "default-master", "default-worker"))
	b := gitopsKey(gitopsSpec("prod", "default-master", "default-worker", "gpu"))
	c := gitopsKey(gitopsSpec("prod", "default-master", "default-worker"))
	if a == b || a != c {
		t.Errorf("keys %q %q %q: a node group must change the key, nothing else", a, b, c)
	}
	for _, st := range []struct {
		status string
		want   bool
	}{{"CREATE_COMPLETE", true}, {"UPDATE_COMPLETE", true}, {"DELETE_COMPLETE", false}, {"CREATE_IN_PROGRESS", false}, {"UPDATE_FAILED", false}} {
		if usable(st.status) != st.want {
			t.Errorf("usable(%s) = %v", st.status, !st.want)
		}
	}
}

var updateGolden = flag.Bool("update", false, "rewrite testdata/argocd-cluster-secret.json")

// TestArgoCDSecretGolden keeps the Secret of one cluster in testdata:
// test/argocd (a Go module of its own, so Argo CD's dependency graph stays
// out of this one) reads that file back with Argo CD's own code for cluster
// Secrets, down to the TLS client configuration it connects with. The CA
// and the admin certificate are Ed25519, made from fixed seeds and dates
// (deterministic: the file is stable); they exist only here. Rewrite it
// with go test ./server/clusters -update.
func TestArgoCDSecretGolden(t *testing.T) {
	caPEM, certPEM, keyPEM := fixedAdminCredential(t)
	acc := kube.WorkloadAccess{Server: "https://203.0.113.10:6443", CAData: caPEM, CertData: certPEM, KeyData: keyPEM}
	s, err := argoCDSecret(gitopsSpec("prod", "default-master", "default-worker", "gpu"), acc, gitopsTarget{Namespace: "argocd", Project: "platform"})
	if err != nil {
		t.Fatal(err)
	}
	s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "argocd-cluster-secret.json")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./server/clusters -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("the Secret differs from %s; rewrite it with -update if intended:\n%s", path, got)
	}
}

// fixedAdminCredential is a CA and a client certificate it signed, as
// Cluster API issues into the kubeconfig Secret, made deterministically.
func fixedAdminCredential(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	adminKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"}, NotBefore: from, NotAfter: to,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(nil, ca, ca, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	admin := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}},
		NotBefore: from, NotAfter: to, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	adminDER, err := x509.CreateCertificate(nil, admin, ca, adminKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(adminKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: adminDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}
