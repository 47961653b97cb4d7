package kube

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestEnsureNamespacePodSecurity: a project namespace the sidecar makes, and
// one made before it labelled them (unlabelled, or labelled privileged),
// enforces Pod Security "baseline" and warns and audits at "restricted"
// after EnsureNamespace, done by an identity holding only what deploy/rbac
// grants on namespaces (get, create, patch); the test bed's real PodSecurity
// admission then refuses a privileged pod there (server-side dry run) and
// admits the chart's cluster-autoscaler pod (its security context). A
// namespace already enforcing "restricted" is left as it is.
func TestEnsureNamespacePodSecurity(t *testing.T) {
	ctx := context.Background()
	c := namespaceOnlyClient(t)
	id := rand.String(6)
	fresh, unlabelled, privileged, stricter := "psa-new-"+id, "psa-old-"+id, "psa-priv-"+id, "psa-strict-"+id
	for ns, labels := range map[string]map[string]string{
		unlabelled: nil,
		privileged: {PodSecurityEnforceLabel: "privileged"},
		stricter:   {PodSecurityEnforceLabel: "restricted"},
	} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ns                   string
		enforce, warn, audit string
	}{
		{fresh, "baseline", "restricted", "restricted"},
		{unlabelled, "baseline", "restricted", "restricted"},
		{privileged, "baseline", "restricted", "restricted"},
		{stricter, "restricted", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			for range 2 { // idempotent, and a second process converges too
				if err := c.EnsureNamespace(ctx, tt.ns, map[string]string{"app.kubernetes.io/managed-by": "magnum-capi"}); err != nil {
					t.Fatalf("EnsureNamespace: %v", err)
				}
				c.ForgetNamespace(tt.ns)
			}
			var got corev1.Namespace
			if err := env.Client.Get(ctx, client.ObjectKey{Name: tt.ns}, &got); err != nil {
				t.Fatal(err)
			}
			for label, want := range map[string]string{PodSecurityEnforceLabel: tt.enforce, "pod-security.kubernetes.io/warn": tt.warn, "pod-security.kubernetes.io/audit": tt.audit} {
				if got.Labels[label] != want {
					t.Errorf("label %s = %q, want %q", label, got.Labels[label], want)
				}
			}
			err := dryRunPod(ctx, tt.ns, privilegedPod())
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
				t.Errorf("a privileged pod in %s: %v; want refused by PodSecurity", tt.ns, err)
			}
			if tt.enforce == "baseline" {
				if err := dryRunPod(ctx, tt.ns, autoscalerPod()); err != nil {
					t.Errorf("the chart's autoscaler pod in %s: %v; want admitted", tt.ns, err)
				}
			}
		})
	}
}

// namespaceOnlyClient is an identity holding deploy/rbac's rights on
// namespaces and nothing else (no NamespaceRole: no RoleBinding is made).
func namespaceOnlyClient(t *testing.T) *Cluster {
	t.Helper()
	ctx := context.Background()
	user := "psa-sidecar-" + rand.String(6)
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create", "patch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}},
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	_, cfg, err := env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect("test", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dryRunPod asks the API server (as the test bed's admin) to admit pod in
// ns without keeping it.
func dryRunPod(ctx context.Context, ns string, pod *corev1.Pod) error {
	pod.Namespace = ns
	return env.Client.Create(ctx, pod, client.DryRunAll)
}

func privilegedPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "privileged-"}, Spec: corev1.PodSpec{
		HostPID: true,
		Containers: []corev1.Container{{Name: "c", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}},
	}}
}

// autoscalerPod has the openstack-cluster chart's cluster-autoscaler
// security context (its values' autoscaler.podSecurityContext and
// securityContext, test/testdata/charts/openstack-cluster/values.yaml,
// which are chart 0.27.0's defaults) and its kubeconfig Secret volume.
func autoscalerPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "autoscaler-"}, Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1001))},
		Containers: []corev1.Container{{Name: "autoscaler", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0",
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			Ports:        []corev1.ContainerPort{{ContainerPort: 8085}},
			VolumeMounts: []corev1.VolumeMount{{Name: "kubeconfig", MountPath: "/mnt/kubeconfig", ReadOnly: true}}}},
		Volumes: []corev1.Volume{{Name: "kubeconfig", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x-kubeconfig"}}}},
	}}
}
