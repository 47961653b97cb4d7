// Package stackhpc installs a cluster the way the StackHPC magnum-capi-helm
// driver 1.4.0 does (shared/research/capi-helm-driver.md §1.3, §2, §4, §5), so
// the adoption tests start from what that driver leaves behind: its release
// name and namespace, its Secrets written by server-side apply as field
// manager "magnum" with its labels, an application credential named as it
// names them, and its values document (values.yaml.tmpl) installed with the
// Helm SDK as field manager "helm", the helm CLI it runs.
//
// It is test code, not product code: test/e2e imports it and the Python
// functional tests run test/cmd/stackhpc-install (make build builds it).
package stackhpc

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"text/template"
	"time"

	"helm.sh/helm/v3/pkg/action"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/testchart"
)

//go:embed values.yaml.tmpl
var valuesTemplate string

// KeyPair is one PEM certificate and its key.
type KeyPair struct {
	Certificate string `json:"certificate"`
	PrivateKey  string `json:"private_key"`
}

// CAs are what the StackHPC driver reads from Magnum's certificate manager:
// the cluster CA, the etcd and front-proxy CAs, and Magnum's client
// certificate (used as the service-account key pair).
type CAs struct {
	CA             KeyPair `json:"ca"`
	EtcdCA         KeyPair `json:"etcd_ca"`
	FrontProxyCA   KeyPair `json:"front_proxy_ca"`
	ServiceAccount KeyPair `json:"service_account"`
}

// NodeGroup is a worker node group as the driver sends it.
type NodeGroup struct {
	Name   string `json:"name"`
	Flavor string `json:"flavor"`
	Count  int    `json:"count"`
}

// Cluster is the Magnum cluster (and its template's facts) to install.
type Cluster struct {
	Name      string `json:"name"`
	UUID      string `json:"uuid"`
	ProjectID string `json:"project_id"`
	UserID    string `json:"user_id"`
	// StackID is the release name; empty: generated as the driver does.
	StackID         string `json:"stack_id,omitempty"`
	NamespacePrefix string `json:"namespace_prefix,omitempty"`
	// KubeVersion is the image's kube_version property.
	KubeVersion       string      `json:"kube_version"`
	ImageID           string      `json:"image_id"`
	ExternalNetworkID string      `json:"external_network_id"`
	DNSNameserver     string      `json:"dns_nameserver"`
	MasterFlavor      string      `json:"master_flavor"`
	MasterCount       int         `json:"master_count"`
	NodeGroups        []NodeGroup `json:"nodegroups"`
	Keypair           string      `json:"keypair,omitempty"`
	// VolumeTypes are Cinder's volume type names; the first is the default
	// (no values.csiCinderDefaultVolumeType configured).
	VolumeTypes   []string `json:"volume_types"`
	NetworkDriver string   `json:"network_driver"`
	// AuthURL (Keystone v3) and Token (the user's): the application
	// credential is the user's, made with the user's token.
	AuthURL string `json:"auth_url"`
	Token   string `json:"token"`
	CAs     CAs    `json:"cas"`
}

// Installed is what the install left.
type Installed struct {
	StackID      string         `json:"stack_id"`
	Namespace    string         `json:"namespace"`
	CredentialID string         `json:"credential_id"`
	Values       map[string]any `json:"values"`
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// sanitizedName is driver_utils.sanitized_name.
func sanitizedName(name string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// ReleaseName is _generate_release_name: the sanitized name cut to 30 (a
// trailing "-" kept), "-", and Magnum's short_id: 60 random bits as 12
// lowercase base32 characters.
func ReleaseName(clusterName string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	base := sanitizedName(clusterName)
	if len(base) > 30 {
		base = base[:30]
	}
	return strings.ToLower(base + "-" + base32.StdEncoding.EncodeToString(b[:])[:12]), nil
}

// Namespace is driver_utils.cluster_namespace.
func Namespace(prefix, projectID string) string {
	return prefix + "-" + regexp.MustCompile(`[^a-z0-9]`).ReplaceAllString(strings.ToLower(projectID), "")
}

// Values renders values.yaml.tmpl for c, as _update_helm_release builds it.
func Values(c Cluster) (map[string]any, error) {
	var dns []string
	for _, s := range strings.Split(c.DNSNameserver, ",") {
		if s = strings.TrimSpace(s); s != "" {
			dns = append(dns, s)
		}
	}
	if len(c.VolumeTypes) == 0 {
		// volume_types[0] raises IndexError in the driver: no cluster.
		return nil, fmt.Errorf("no Cinder volume types")
	}
	tmpl, err := template.New("values").Funcs(template.FuncMap{
		"json": func(v any) (string, error) {
			out, err := json.Marshal(v)
			return string(out), err
		},
		// _storageclass_definitions, default labels and options.
		"storageClass": func(volumeType string) map[string]any {
			return map[string]any{
				"name": sanitizedName(volumeType), "reclaimPolicy": "Retain", "allowVolumeExpansion": true,
				"availabilityZone": "nova", "volumeType": volumeType, "allowedTopologies": []any{},
				"fstype": "ext4", "enabled": true, "volumeBindingMode": "WaitForFirstConsumer",
			}
		},
	}).Parse(valuesTemplate)
	if err != nil {
		return nil, err
	}
	data := struct {
		Cluster
		DNSNameservers []string
	}{c, dns}
	data.KubeVersion = regexp.MustCompile(`[^0-9.]+`).ReplaceAllString(strings.TrimLeft(c.KubeVersion, "v"), "")
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, err
	}
	var values map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &values); err != nil {
		return nil, fmt.Errorf("values.yaml.tmpl rendered invalid YAML: %w\n%s", err, buf.String())
	}
	return values, nil
}

// Install does what create_cluster does after Magnum's conductor: name the
// release, ensure the namespace, make the application credential and its
// Secret, write the CA Secrets, and install the chart. kubeconfig is the
// management cluster's.
func Install(ctx context.Context, kubeconfig string, c Cluster) (Installed, error) {
	if c.NamespacePrefix == "" {
		c.NamespacePrefix = "magnum"
	}
	if c.StackID == "" {
		id, err := ReleaseName(c.Name)
		if err != nil {
			return Installed{}, err
		}
		c.StackID = id
	}
	out := Installed{StackID: c.StackID, Namespace: Namespace(c.NamespacePrefix, c.ProjectID)}
	values, err := Values(c)
	if err != nil {
		return out, err
	}
	out.Values = values
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return out, err
	}
	kc, err := client.New(cfg, client.Options{})
	if err != nil {
		return out, err
	}
	apply := func(obj map[string]any) error {
		u := &unstructured.Unstructured{Object: obj}
		if err := kc.Patch(ctx, u, client.Apply, client.FieldOwner("magnum"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		return nil
	}
	if err := apply(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": out.Namespace}}); err != nil {
		return out, err
	}
	// _k8s_resource_labels, on every Secret the driver writes.
	labels := map[string]any{
		"magnum.openstack.org/project-id":   c.ProjectID,
		"magnum.openstack.org/user-id":      c.UserID,
		"magnum.openstack.org/cluster-uuid": c.UUID,
		"cluster.x-k8s.io/cluster-name":     c.StackID,
	}
	secret := func(suffix, typ string, data map[string]any) map[string]any {
		s := map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": c.StackID + suffix, "namespace": out.Namespace, "labels": labels},
			"stringData": data}
		if typ != "" {
			s["type"] = typ
		}
		return s
	}
	id, clouds, err := applicationCredential(ctx, c)
	if err != nil {
		return out, err
	}
	out.CredentialID = id
	cacert, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt") // certifi's bundle in the driver
	if err := apply(secret("-cloud-credentials", "", map[string]any{"clouds.yaml": clouds, "cacert": string(cacert)})); err != nil {
		return out, err
	}
	for _, s := range []struct {
		suffix string
		pair   KeyPair
	}{{"-ca", c.CAs.CA}, {"-etcd", c.CAs.EtcdCA}, {"-proxy", c.CAs.FrontProxyCA}, {"-sa", c.CAs.ServiceAccount}} {
		if err := apply(secret(s.suffix, "cluster.x-k8s.io/secret", map[string]any{"tls.crt": s.pair.Certificate, "tls.key": s.pair.PrivateKey})); err != nil {
			return out, err
		}
	}
	return out, helmInstall(ctx, kubeconfig, out.Namespace, c.StackID, values)
}

// helmInstall is `helm upgrade --install <stack_id> openstack-cluster
// --history-max 10 --timeout 5m` for a new release: an install, whose
// objects Kubernetes records under the helm binary's name.
func helmInstall(ctx context.Context, kubeconfig, ns, name string, values map[string]any) error {
	dir, err := os.MkdirTemp("", "stackhpc-helm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	_, cfg, err := testchart.NewHelm(kubeconfig, ns, dir)
	if err != nil {
		return err
	}
	ch, err := testchart.Load()
	if err != nil {
		return err
	}
	// A process-wide setting of Helm's: restored at once, so a sidecar
	// running in the same process keeps its own name.
	was := helmkube.ManagedFieldsManager
	helmkube.ManagedFieldsManager = "helm"
	defer func() { helmkube.ManagedFieldsManager = was }()
	inst := action.NewInstall(cfg)
	inst.ReleaseName = name
	inst.Namespace = ns
	inst.Timeout = 5 * time.Minute
	if _, err := inst.RunWithContext(ctx, ch, values); err != nil {
		return fmt.Errorf("helm install %s/%s: %w", ns, name, err)
	}
	return nil
}

// applicationCredential is app_creds.create_app_cred and the clouds.yaml the
// driver writes (keys sorted, as yaml.safe_dump writes them).
func applicationCredential(ctx context.Context, c Cluster) (id string, cloudsYAML string, err error) {
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", "", err
	}
	body, _ := json.Marshal(map[string]any{"application_credential": map[string]any{
		"name":        fmt.Sprintf("magnum-%s-%s", c.UUID, hex.EncodeToString(nonce[:])),
		"description": fmt.Sprintf("Magnum cluster (%s)", c.Name),
	}})
	url := strings.TrimRight(c.AuthURL, "/") + "/users/" + c.UserID + "/application_credentials"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Auth-Token", c.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return "", "", fmt.Errorf("creating the application credential: %s: %s", resp.Status, data)
	}
	var created struct {
		Credential struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		} `json:"application_credential"`
	}
	if err := json.Unmarshal(data, &created); err != nil {
		return "", "", err
	}
	clouds, err := yaml.Marshal(map[string]any{"clouds": map[string]any{"openstack": map[string]any{
		"auth": map[string]any{
			"auth_url":                      c.AuthURL,
			"application_credential_id":     created.Credential.ID,
			"application_credential_secret": created.Credential.Secret,
		},
		"auth_type":            "v3applicationcredential",
		"identity_api_version": 3,
		"interface":            "public",
		"region_name":          nil,
		"verify":               true,
	}}})
	return created.Credential.ID, string(clouds), err
}
