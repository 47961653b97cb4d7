package capisim_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/magnum-capi/magnum-capi/certs/certstest"
)

// TestKubeconfigRecreatedFromTheCurrentCA: a deleted kubeconfig Secret is
// written again, as KCP does, signed by whatever CA the <cluster>-ca Secret
// holds now (the driver's CA rotation relies on it).
func TestKubeconfigRecreatedFromTheCurrentCA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	r := newRelease("kubeconfig", ns)
	r.install(t)
	eventually(t, converge, "the release to be ready", func() error { return readyErr(ctx, r) })

	ca, err := certstest.NewCA("rotated")
	if err != nil {
		t.Fatal(err)
	}
	caSecret := &corev1.Secret{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Name + "-ca"}, caSecret); err != nil {
		t.Fatal(err)
	}
	caSecret.Data["tls.crt"], caSecret.Data["tls.key"] = ca.Pair.Certificate, ca.Pair.PrivateKey
	if err := env.Client.Update(ctx, caSecret); err != nil {
		t.Fatal(err)
	}
	old := &corev1.Secret{}
	key := types.NamespacedName{Namespace: ns, Name: r.Name + "-kubeconfig"}
	if err := env.Client.Get(ctx, key, old); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, converge, "a new kubeconfig signed by the new CA", func() error {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			return err
		}
		if s.UID == old.UID {
			return errors.New("still the old Secret")
		}
		return signedBy(s.Data["value"], ca.Cert)
	})
}

// signedBy checks that a kubeconfig trusts ca and holds a client
// certificate ca signed.
func signedBy(kubeconfig []byte, ca *x509.Certificate) error {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return err
	}
	for name, c := range cfg.Clusters {
		block, _ := pem.Decode(c.CertificateAuthorityData)
		if block == nil {
			return fmt.Errorf("cluster %s: no CA data", name)
		}
		got, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return err
		}
		if !got.Equal(ca) {
			return fmt.Errorf("cluster %s trusts %s, not the new CA", name, got.Subject)
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
		if err := cert.CheckSignatureFrom(ca); err != nil {
			return fmt.Errorf("user %s: %w", name, err)
		}
	}
	return nil
}
