package e2e

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/certs/certstest"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// TestCARotation: rotate_ca_certificate with new material from Magnum
// rewrites the CA Secrets, replaces every machine, has the kubeconfig
// issued again from the new CA, and the cluster returns to
// UPDATE_COMPLETE. A client certificate Magnum signs with the new CA (what
// `openstack coe cluster config` gives users) verifies against the new
// <stack>-ca; one from the old CA does not. A later resize does not roll
// the machines again.
func TestCARotation(t *testing.T) {
	t.Parallel()
	c := newCluster(t, "rotate-ca", "v1.33.2", 2)
	stackID := c.create(t, driver)
	c.waitOn(t, driver, "CREATE_COMPLETE", 3*time.Minute)
	ns := projectNamespace()
	kc := stack.Env.Client
	ctx := context.Background()

	before := machineNames(t, ns, stackID)
	if len(before) != 3 {
		t.Fatalf("machines before the rotation %v, want 3", before)
	}
	var oldKubeconfig corev1.Secret
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + "-kubeconfig"}, &oldKubeconfig); err != nil {
		t.Fatal(err)
	}
	// The CA the cluster was created with, as Magnum holds it.
	oldCA := caFromProto(t, c.certs.GetCa())

	newAuth, newCA, err := certstest.Authorities("rotated")
	if err != nil {
		t.Fatal(err)
	}
	c.certs = harness.CertificateAuthorities(newAuth)
	rctx, cancel := callCtx()
	_, err = driver.RotateCACertificate(rctx, &pb.RotateCACertificateRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
	cancel()
	if err != nil {
		t.Fatalf("RotateCACertificate: %v", err)
	}
	c.setStatus("UPDATE_IN_PROGRESS")
	for suffix, want := range map[string][]byte{
		"-ca": newAuth.CA.Certificate, "-etcd": newAuth.EtcdCA.Certificate, "-proxy": newAuth.FrontProxyCA.Certificate,
	} {
		var s corev1.Secret
		if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + suffix}, &s); err != nil {
			t.Fatal(err)
		}
		if err := pemEqual(string(s.Data["tls.crt"]), want); err != nil {
			t.Errorf("Secret %s%s after the rotation: %v", stackID, suffix, err)
		}
	}
	c.waitOn(t, driver, "UPDATE_COMPLETE", 4*time.Minute)

	after := machineNames(t, ns, stackID)
	for name := range before {
		if after[name] {
			t.Errorf("machine %s survived the CA rotation", name)
		}
	}
	if len(after) != 3 {
		t.Errorf("machines after the rotation %v, want 3 new ones", after)
	}

	var caSecret, kubeconfig corev1.Secret
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + "-ca"}, &caSecret); err != nil {
		t.Fatal(err)
	}
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + "-kubeconfig"}, &kubeconfig); err != nil {
		t.Fatalf("no kubeconfig after the rotation: %v", err)
	}
	if kubeconfig.UID == oldKubeconfig.UID {
		t.Error("the kubeconfig Secret from before the rotation is still there")
	}
	clusterCA := parseCert(t, caSecret.Data["tls.crt"])
	if err := kubeconfigSignedBy(kubeconfig.Data["value"], clusterCA); err != nil {
		t.Errorf("kubeconfig after the rotation: %v", err)
	}

	// As `openstack coe cluster config` does: Magnum signs a client
	// certificate with the cluster CA it holds.
	_, fresh, err := newCA.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyClient(fresh, clusterCA); err != nil {
		t.Errorf("a client certificate from the new CA does not verify against %s-ca: %v", stackID, err)
	}
	_, stale, err := oldCA.ClientCert("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyClient(stale, oldCA.Cert); err != nil {
		t.Fatalf("the old CA's client certificate does not even verify against the old CA: %v", err)
	}
	if err := verifyClient(stale, clusterCA); err == nil {
		t.Errorf("a client certificate from the old CA still verifies against %s-ca", stackID)
	}

	// The rotation marker is carried: a resize adds a worker, and rolls
	// nothing.
	ctx2, cancel := callCtx()
	_, err = driver.ResizeCluster(ctx2, c.resizeRequest(3))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	c.waitOn(t, driver, "UPDATE_COMPLETE", 3*time.Minute)
	resized := machineNames(t, ns, stackID)
	for name := range after {
		if !resized[name] {
			t.Errorf("machine %s was replaced by a resize after the rotation", name)
		}
	}
	if len(resized) != 4 {
		t.Errorf("machines after the resize %v, want 4", resized)
	}
	c.remove(t, driver)
}

func machineNames(t *testing.T, ns, stackID string) map[string]bool {
	t.Helper()
	var machines clusterv1.MachineList
	if err := stack.Env.Client.List(context.Background(), &machines, client.InNamespace(ns),
		client.MatchingLabels{clusterv1.ClusterNameLabel: stackID}); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range machines.Items {
		if m.DeletionTimestamp == nil {
			out[m.Name] = true
		}
	}
	return out
}

func parseCert(t *testing.T, pemBytes []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatal("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func pemEqual(got string, want []byte) error {
	g, _ := pem.Decode([]byte(got))
	w, _ := pem.Decode(want)
	if g == nil || w == nil || string(g.Bytes) != string(w.Bytes) {
		return fmt.Errorf("certificate differs from the expected one")
	}
	return nil
}

// verifyClient verifies a client certificate against a CA as an API server
// does.
func verifyClient(cert, ca *x509.Certificate) error {
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

// caFromProto rebuilds a signing CA from the key pair Magnum sends.
func caFromProto(t *testing.T, kp *pb.KeyPair) certstest.CA {
	t.Helper()
	block, _ := pem.Decode([]byte(kp.GetPrivateKey()))
	if block == nil {
		t.Fatal("no PEM private key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		t.Fatalf("a %T cannot sign", key)
	}
	return certstest.CA{
		Pair: certs.KeyPair{Certificate: []byte(kp.GetCertificate()), PrivateKey: []byte(kp.GetPrivateKey())},
		Cert: parseCert(t, []byte(kp.GetCertificate())), Key: signer,
	}
}

// kubeconfigSignedBy checks that a kubeconfig trusts ca and carries a
// client certificate ca signed.
func kubeconfigSignedBy(kubeconfig []byte, ca *x509.Certificate) error {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return err
	}
	for name, cl := range cfg.Clusters {
		block, _ := pem.Decode(cl.CertificateAuthorityData)
		if block == nil {
			return fmt.Errorf("cluster %s: no CA data", name)
		}
		got, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return err
		}
		if !got.Equal(ca) {
			return fmt.Errorf("cluster %s trusts %s, not the cluster CA", name, got.Subject)
		}
	}
	for name, u := range cfg.AuthInfos {
		block, _ := pem.Decode(u.ClientCertificateData)
		if block == nil {
			return fmt.Errorf("user %s: no client certificate", name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return err
		}
		if err := verifyClient(cert, ca); err != nil {
			return fmt.Errorf("user %s: %w", name, err)
		}
	}
	return nil
}
