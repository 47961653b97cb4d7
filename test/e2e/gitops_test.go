package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/certs/certstest"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/harness"
)

// argoCDNamespace is where the e2e sidecar with the GitOps hand-off writes
// its Argo CD cluster Secrets (in the first management cluster, as a site
// without argocd.kubeconfig has it); footprintOf records them.
const argoCDNamespace = "argocd"

// argoCDProject is the AppProject the e2e sidecars scope their clusters to
// (argocd.project is required with the hand-off).
const argoCDProject = "magnum"

// argoClusterConfig is the config JSON of an Argo CD cluster Secret, as
// Argo CD documents it (operator-manual/declarative-setup, "Clusters");
// test/argocd decodes the same format with Argo CD's own code.
type argoClusterConfig struct {
	BearerToken     string `json:"bearerToken"`
	TLSClientConfig struct {
		Insecure bool   `json:"insecure"`
		CAData   []byte `json:"caData"`
		CertData []byte `json:"certData"`
		KeyData  []byte `json:"keyData"`
	} `json:"tlsClientConfig"`
}

// TestGitOpsHandOff: a sidecar with the Argo CD hand-off on (Argo CD's
// namespace reached through argocd.kubeconfig, as an identity bound only by
// deploy/rbac/argocd's Role; here on the same test bed API server) registers
// a cluster that reaches CREATE_COMPLETE (an Argo CD cluster Secret with the
// cluster's API address, its CA, the admin client certificate and Magnum's
// facts as labels), writes it again with the new credential after a CA
// rotation, and removes it at delete; a template saying
// argocd_register=false gets none; nothing is left behind.
func TestGitOpsHandOff(t *testing.T) {
	ensureNamespace(t, argoCDNamespace)
	// Argo CD's cluster reached by a kubeconfig of its own (argocd.kubeconfig),
	// whose identity holds nothing but deploy/rbac/argocd's Role there.
	kubeconfig, _ := argoIdentity(t, argoCDNamespace, "magnum-capi-argocd", []string{"create", "patch", "delete"})
	opts := harness.SidecarOptions{Metrics: true, Configure: func(c *config.Config) {
		c.ArgoCD = config.ArgoCD{Enabled: true, RegisterByDefault: true, Namespace: argoCDNamespace, Kubeconfig: kubeconfig, Project: argoCDProject}
	}}
	sc := startSidecar(t, opts)
	on := newCluster(t, "gitops", "v1.33.2", 1)
	off := newCluster(t, "gitops-off", "v1.33.2", 1)
	on.via, off.via = sc.Driver, sc.Driver
	if off.spec.ClusterTemplate.Labels == nil {
		off.spec.ClusterTemplate.Labels = map[string]string{}
	}
	off.spec.ClusterTemplate.Labels["argocd_register"] = "false"
	before := footprintOf(t, on.owner(), off.owner())
	on.create(t, sc.Driver)
	off.create(t, sc.Driver)
	on.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)
	off.waitOn(t, sc.Driver, "CREATE_COMPLETE", 3*time.Minute)

	secret := argoSecret(t, on, func(*corev1.Secret) bool { return true })
	checkArgoSecret(t, on, secret)
	if s := getArgoSecret(t, off); s != nil {
		t.Errorf("a cluster whose template says argocd_register=false was registered: %s", s.Name)
	}
	handOffAfterUpgrade(t, on, opts)

	// CA rotation: Magnum's new CA, the machines rolled, a new kubeconfig.
	newAuth, _, err := certstest.Authorities("gitops-rotated")
	if err != nil {
		t.Fatal(err)
	}
	on.certs = harness.CertificateAuthorities(newAuth)
	ctx, cancel := callCtx()
	_, err = sc.Driver.RotateCACertificate(ctx, &pb.RotateCACertificateRequest{Context: on.ctx, Spec: on.spec, Certificates: on.certs})
	cancel()
	if err != nil {
		t.Fatalf("RotateCACertificate: %v", err)
	}
	on.setStatus("UPDATE_IN_PROGRESS")
	on.waitOn(t, sc.Driver, "UPDATE_COMPLETE", 4*time.Minute)
	rotated := argoSecret(t, on, func(s *corev1.Secret) bool { return string(s.Data["config"]) != string(secret.Data["config"]) })
	cfg := checkArgoSecret(t, on, rotated)
	if err := pemEqual(string(cfg.TLSClientConfig.CAData), newAuth.CA.Certificate); err != nil {
		t.Errorf("the Argo CD Secret after the CA rotation: caData %v", err)
	}

	on.remove(t, sc.Driver)
	off.remove(t, sc.Driver)
	if s := getArgoSecret(t, on); s != nil {
		t.Errorf("Argo CD Secret %s/%s left after DELETE_COMPLETE", s.Namespace, s.Name)
	}
	var leaked []string
	for _, change := range before.changes(footprintOf(t, on.owner(), off.owner())) {
		if !(strings.HasPrefix(change, "added ") && strings.Contains(change, " Namespace ")) {
			leaked = append(leaked, change)
		}
	}
	if len(leaked) > 0 {
		t.Errorf("left after DELETE_COMPLETE:\n%s", strings.Join(leaked, "\n"))
	}
}

// handOffAfterUpgrade: a cluster Secret an earlier version wrote (the same
// field manager, tenant-chosen names under magnum.openstack.org/ keys, no
// record of the hand-off) is rewritten by the hand-off of a sidecar of this
// version started with opts, once a status poll offers it the cluster's
// facts: the earlier keys are gone, the current ones are there.
func handOffAfterUpgrade(t *testing.T, c *cluster, opts harness.SidecarOptions) {
	t.Helper()
	earlier := getArgoSecret(t, c).DeepCopy()
	earlier.ManagedFields, earlier.ResourceVersion, earlier.UID = nil, "", ""
	rename := func(m map[string]string) {
		for k, v := range m {
			for now, before := range map[string]string{"tenant.magnum-capi.io/": "magnum.openstack.org/", "node-group.tenant.magnum-capi.io/": "node-group.magnum.openstack.org/"} {
				if strings.HasPrefix(k, now) {
					delete(m, k)
					m[before+strings.TrimPrefix(k, now)] = v
				}
			}
		}
	}
	rename(earlier.Labels)
	rename(earlier.Annotations)
	kc, err := kube.Connect("earlier-version", stack.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.ApplySecret(context.Background(), earlier); err != nil {
		t.Fatalf("writing the Secret as an earlier version did: %v", err)
	}
	// An earlier version kept no record of the hand-off.
	if err := kc.DeleteSecret(context.Background(), projectNamespace(), c.spec.Cluster.StackId+"-argocd"); err != nil {
		t.Fatal(err)
	}
	upgraded := startSidecar(t, opts)
	via := c.via
	c.via = upgraded.Driver
	defer func() { c.via = via }()
	s := argoSecret(t, c, func(s *corev1.Secret) bool { return s.Labels["magnum.openstack.org/cluster-name"] == "" })
	for k := range s.Labels {
		if k == "magnum.openstack.org/cluster-name" || k == "magnum.openstack.org/cluster-template" || strings.HasPrefix(k, "node-group.magnum.openstack.org/") {
			t.Errorf("after the upgrade the Secret still carries the earlier label %s", k)
		}
	}
	if _, ok := s.Annotations["magnum.openstack.org/node-groups"]; ok {
		t.Error("after the upgrade the Secret still carries the earlier annotation magnum.openstack.org/node-groups")
	}
	checkArgoSecret(t, c, s)
}

// checkArgoSecret checks s against the cluster's kubeconfig Secret (which
// Cluster API issued from the cluster CA) and Magnum's facts, and returns
// its decoded config.
func checkArgoSecret(t *testing.T, c *cluster, s *corev1.Secret) argoClusterConfig {
	t.Helper()
	var kubeconfig corev1.Secret
	ns, stackID := projectNamespace(), c.spec.Cluster.StackId
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-kubeconfig"}, &kubeconfig); err != nil {
		t.Fatal(err)
	}
	acc, err := kube.ParseKubeconfig(kubeconfig.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	var cfg argoClusterConfig
	if err := json.Unmarshal(s.Data["config"], &cfg); err != nil {
		t.Fatalf("config of %s: %v", s.Name, err)
	}
	if string(s.Data["server"]) != acc.Server || string(s.Data["name"]) != stackID {
		t.Errorf("server %q name %q, want %q and %q", s.Data["server"], s.Data["name"], acc.Server, stackID)
	}
	tls := cfg.TLSClientConfig
	if tls.Insecure || string(tls.CAData) != string(acc.CAData) || string(tls.CertData) != string(acc.CertData) || string(tls.KeyData) != string(acc.KeyData) {
		t.Errorf("tlsClientConfig is not the kubeconfig's CA, certificate and key (insecure %v)", tls.Insecure)
	}
	var caSecret corev1.Secret
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: stackID + "-ca"}, &caSecret); err != nil {
		t.Fatal(err)
	}
	if err := verifyClient(parseCert(t, tls.CertData), parseCert(t, caSecret.Data["tls.crt"])); err != nil {
		t.Errorf("the Argo CD credential: %v", err)
	}
	want := map[string]string{
		"argocd.argoproj.io/secret-type":                  "cluster",
		"magnum.openstack.org/project-id":                 stack.Info.Project.ID,
		"magnum.openstack.org/cluster-uuid":               c.spec.Cluster.Uuid,
		"magnum.openstack.org/stack-id":                   stackID,
		"magnum.openstack.org/cluster-template-uuid":      c.spec.ClusterTemplate.Uuid,
		"tenant.magnum-capi.io/cluster-name":              c.spec.Cluster.Name,
		"tenant.magnum-capi.io/cluster-template":          c.spec.ClusterTemplate.Name,
		"node-group.tenant.magnum-capi.io/default-worker": "worker",
	}
	for k, v := range want {
		if s.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, s.Labels[k], v)
		}
	}
	return cfg
}

// argoSecret is the cluster's Argo CD Secret once ok accepts it. The
// hand-off's reconciler writes it soon after a status poll saw the cluster
// complete; a write that failed (the API server busy) is retried after
// 10 s, so this waits a little longer than that.
func argoSecret(t *testing.T, c *cluster, ok func(*corev1.Secret) bool) *corev1.Secret {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := getArgoSecret(t, c)
		if s != nil && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Argo CD Secret %s/magnum-%s as expected for the complete cluster (found: %v)", argoCDNamespace, c.spec.Cluster.StackId, s != nil)
		}
		c.waitOn(t, c.client(), c.spec.Cluster.Status, time.Minute) // a poll, as Magnum's periodic job makes
		time.Sleep(time.Second)
	}
}

func getArgoSecret(t *testing.T, c *cluster) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Namespace: argoCDNamespace, Name: "magnum-" + c.spec.Cluster.StackId}, &s)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		t.Fatal(err)
	}
	return &s
}

// ensureNamespace makes a namespace in the first management cluster (kept:
// other runs of the test use it too).
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := stack.Env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(fmt.Errorf("namespace %s: %w", name, err))
	}
}
