package clusters

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// Argo CD's declarative cluster Secret (operator-manual/declarative-setup,
// "Clusters"): a Secret labelled argocd.argoproj.io/secret-type=cluster
// whose data holds name, server and config, config being JSON with
// tlsClientConfig (base64 PEM in caData, certData, keyData) or a
// bearerToken; project scopes it to one AppProject.
const (
	argoSecretTypeLabel = "argocd.argoproj.io/secret-type"
	argoSecretTypeValue = "cluster"
)

// Labels on the Argo CD cluster Secret, for ApplicationSet cluster
// generators (selector.matchLabels, {{metadata.labels...}}). Label values
// are at most 63 characters of [A-Za-z0-9-_.]: names are cut to fit
// (labelSafe) and kept whole in the annotations of the same key.
//
// Facts Magnum assigns (project, cluster UUID, stack_id, template UUID)
// keep the driver's magnum.openstack.org/ keys. Names a tenant chooses
// (its cluster's, its node groups', a template's: a tenant may make a
// private template named like a public one) go under tenant.magnum-capi.io/
// keys only, so a site selecting on what it trusts never matches a name a
// tenant picked to match.
const (
	gitopsPrefix            = "magnum.openstack.org/"
	gitopsTenantPrefix      = "tenant.magnum-capi.io/"
	gitopsStackIDLabel      = gitopsPrefix + "stack-id"
	gitopsTemplateUUIDLabel = gitopsPrefix + "cluster-template-uuid"
	gitopsClusterNameLabel  = gitopsTenantPrefix + "cluster-name"
	gitopsTemplateLabel     = gitopsTenantPrefix + "cluster-template"
	// gitopsNodeGroupsAnnotation lists every node group, comma-separated
	// (a label value cannot hold a list).
	gitopsNodeGroupsAnnotation = gitopsTenantPrefix + "node-groups"
	gitopsNodeGroupKeyPrefix   = "node-group." + gitopsTenantPrefix
	gitopsManagedByLabel       = "app.kubernetes.io/managed-by"
	gitopsManagedByValue       = "magnum-capi"
	// gitopsDigestAnnotation fingerprints what the Secret was made from,
	// so a refresh that changes nothing is seen as such in the log.
	gitopsDigestAnnotation = gitopsPrefix + "argocd-digest"
)

// gitopsSecretName is the cluster Secret's name in Argo CD's namespace:
// deterministic, so registering again overwrites and deleting needs no
// lookup. stack_id is at most 43 characters of a DNS label.
func gitopsSecretName(stackID string) string { return "magnum-" + stackID }

// argoTLSClientConfig and argoClusterConfig are Argo CD's config JSON;
// []byte fields marshal as base64, which is what Argo CD expects.
type argoTLSClientConfig struct {
	Insecure bool   `json:"insecure"`
	CAData   []byte `json:"caData,omitempty"`
	CertData []byte `json:"certData,omitempty"`
	KeyData  []byte `json:"keyData,omitempty"`
}

type argoClusterConfig struct {
	BearerToken     string              `json:"bearerToken,omitempty"`
	TLSClientConfig argoTLSClientConfig `json:"tlsClientConfig"`
}

// gitopsTarget is where and how the cluster Secrets are written.
type gitopsTarget struct {
	Namespace string
	Project   string
}

// argoCDSecret is the Argo CD cluster Secret of one Magnum cluster.
func argoCDSecret(spec Spec, acc kube.WorkloadAccess, t gitopsTarget) (*corev1.Secret, error) {
	config, err := json.Marshal(argoClusterConfig{
		BearerToken:     acc.BearerToken,
		TLSClientConfig: argoTLSClientConfig{CAData: acc.CAData, CertData: acc.CertData, KeyData: acc.KeyData},
	})
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{"name": []byte(spec.Cluster.StackID), "server": []byte(acc.Server), "config": config}
	if t.Project != "" {
		data["project"] = []byte(t.Project)
	}
	labels, annotations := gitopsLabels(spec)
	annotations[gitopsDigestAnnotation] = digest(data, labels)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: gitopsSecretName(spec.Cluster.StackID), Namespace: t.Namespace,
			Labels: labels, Annotations: annotations,
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}, nil
}

// gitopsLabels are the Magnum facts an ApplicationSet selects on, and the
// whole values of those that had to be cut to fit a label.
func gitopsLabels(spec Spec) (labels, annotations map[string]string) {
	labels = certs.Owner{ClusterUUID: spec.Cluster.UUID, ProjectID: spec.Cluster.ProjectID}.Labels()
	delete(labels, certs.UserIDLabel) // whoever created it; not a fact to deploy by
	labels[argoSecretTypeLabel] = argoSecretTypeValue
	labels[gitopsManagedByLabel] = gitopsManagedByValue
	labels[gitopsStackIDLabel] = spec.Cluster.StackID
	annotations = map[string]string{}
	put := func(key, value string) {
		if v := labelSafe(value); v != "" {
			labels[key] = v
		}
		if labels[key] != value {
			annotations[key] = value
		}
	}
	put(gitopsClusterNameLabel, spec.Cluster.Name)
	put(gitopsTemplateLabel, spec.Template.Name)
	put(gitopsTemplateUUIDLabel, spec.Template.UUID)
	names := make([]string, 0, len(spec.NodeGroups))
	for _, ng := range spec.NodeGroups {
		names = append(names, ng.Name)
		// One label per node group, so a generator can select clusters
		// that have, say, a "gpu" node group: the key's name part obeys
		// the same rule as a value.
		if key := labelSafe(ng.Name); key != "" && key == ng.Name {
			labels[gitopsNodeGroupKeyPrefix+key] = labelSafe(ng.Role)
		}
	}
	sort.Strings(names)
	annotations[gitopsNodeGroupsAnnotation] = strings.Join(names, ",")
	return labels, annotations
}

var (
	labelUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	labelEdges  = regexp.MustCompile(`^[^A-Za-z0-9]+|[^A-Za-z0-9]+$`)
)

// labelSafe makes s a valid label value: characters outside [A-Za-z0-9._-]
// become '_', it is cut to 63 characters, and it starts and ends with a
// letter or digit; "" when nothing is left.
func labelSafe(s string) string {
	s = labelUnsafe.ReplaceAllString(s, "_")
	if len(s) > 63 {
		s = s[:63]
	}
	return labelEdges.ReplaceAllString(s, "")
}

// digest fingerprints the Secret's content (data and labels).
func digest(data map[string][]byte, labels map[string]string) string {
	h := sha256.New()
	for _, m := range []map[string]string{labels, bytesToStrings(data)} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			h.Write([]byte(k + "\x00" + m[k] + "\x00"))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func bytesToStrings(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = base64.StdEncoding.EncodeToString(v)
	}
	return out
}
