package capicontrollers

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Cluster API's managers serve their defaulting and validating webhooks,
// which clusterctl registers with the API server. Here the manager serves
// them on 127.0.0.1 with a certificate of its own, and registers them from
// the webhook manifests in Cluster API's module (config/webhook of core,
// the kubeadm control plane and bootstrap providers), pointed at that
// address. Webhooks for kinds this test bed does not serve (ClusterClass,
// MachinePool, ClusterResourceSet, IPAM, ExtensionConfig) are left out.

// webhookKinds are the kinds whose webhooks the manager serves, as the
// last part of their webhook paths.
var webhookKinds = map[string]bool{
	"cluster": true, "machine": true, "machineset": true, "machinedeployment": true, "machinehealthcheck": true,
	"machinedrainrule": true, "kubeadmcontrolplane": true, "kubeadmcontrolplanetemplate": true,
	"kubeadmconfig": true, "kubeadmconfigtemplate": true,
}

// webhookManifests are the manifest files, relative to the module.
var webhookManifests = map[string]string{
	"core":          "config/webhook/manifests.yaml",
	"control-plane": "controlplane/kubeadm/config/webhook/manifests.yaml",
	"bootstrap":     "bootstrap/kubeadm/config/webhook/manifests.yaml",
}

// webhookConfigurationPrefix names the configurations this process owns.
const webhookConfigurationPrefix = "magnum-capi-testbed-capi-"

// servingCert writes a self-signed certificate for 127.0.0.1 into dir as
// tls.crt and tls.key, and returns the certificate (the CA bundle).
func servingCert(dir string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "capi-controllers webhooks"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, err
	}
	return certPEM, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// freePort asks the kernel for a free port on 127.0.0.1 (test/ports.Free
// in the main module; this module imports nothing from it).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// webhookConfigurations reads Cluster API's webhook manifests and points
// the webhooks the manager serves at baseURL.
func webhookConfigurations(capiDir, baseURL string, caBundle []byte) ([]client.Object, error) {
	var out []client.Object
	for component, rel := range webhookManifests {
		data, err := os.ReadFile(filepath.Join(capiDir, rel))
		if err != nil {
			return nil, fmt.Errorf("reading Cluster API's webhook manifests: %w", err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var raw map[string]any
			if err := decoder.Decode(&raw); err != nil {
				if err.Error() == "EOF" {
					break
				}
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			if raw == nil {
				continue
			}
			doc, err := yaml.Marshal(raw)
			if err != nil {
				return nil, err
			}
			switch raw["kind"] {
			case "MutatingWebhookConfiguration":
				cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
				if err := yaml.Unmarshal(doc, cfg); err != nil {
					return nil, err
				}
				var kept []admissionregistrationv1.MutatingWebhook
				for _, w := range cfg.Webhooks {
					if point(&w.ClientConfig, baseURL, caBundle) {
						kept = append(kept, w)
					}
				}
				cfg.Webhooks, cfg.Name = kept, webhookConfigurationPrefix+component+"-mutating"
				out = append(out, cfg)
			case "ValidatingWebhookConfiguration":
				cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				if err := yaml.Unmarshal(doc, cfg); err != nil {
					return nil, err
				}
				var kept []admissionregistrationv1.ValidatingWebhook
				for _, w := range cfg.Webhooks {
					if point(&w.ClientConfig, baseURL, caBundle) {
						kept = append(kept, w)
					}
				}
				cfg.Webhooks, cfg.Name = kept, webhookConfigurationPrefix+component+"-validating"
				out = append(out, cfg)
			}
		}
	}
	return out, nil
}

// point rewrites a service reference into a URL at baseURL; false for a
// webhook the manager does not serve.
func point(cc *admissionregistrationv1.WebhookClientConfig, baseURL string, caBundle []byte) bool {
	if cc.Service == nil || cc.Service.Path == nil {
		return false
	}
	path := *cc.Service.Path
	if !webhookKinds[path[strings.LastIndex(path, "-")+1:]] {
		return false
	}
	url := baseURL + path
	*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	return true
}

// installWebhooks creates or replaces the configurations.
func installWebhooks(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, obj := range objs {
		existing := obj.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing)
		switch {
		case apierrors.IsNotFound(err):
			err = c.Create(ctx, obj)
		case err == nil:
			obj.SetResourceVersion(existing.GetResourceVersion())
			err = c.Update(ctx, obj)
		}
		if err != nil {
			return fmt.Errorf("registering webhook configuration %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// uninstallWebhooks removes the configurations, so that a stopped manager
// does not leave the API server refusing every Cluster API write.
func uninstallWebhooks(ctx context.Context, c client.Client, objs []client.Object) error {
	var errs []error
	for _, obj := range objs {
		if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing webhook configurations: %v", errs)
	}
	return nil
}
