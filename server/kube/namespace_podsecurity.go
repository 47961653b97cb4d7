package kube

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodSecurityEnforceLabel is the namespace label Kubernetes' PodSecurity
// admission enforces.
const PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"

// podSecurityLabels are what a project namespace carries: the sidecar's
// identity may create Deployments there (the chart's cluster-autoscaler),
// so a stolen kubeconfig must not be able to run a privileged pod, which
// reaches the node and every tenant's CA keys. "baseline" refuses
// privileged containers, host namespaces, host paths and added
// capabilities; it is the strictest level the openstack-cluster chart's
// autoscaler passes (chart 0.27 sets no seccomp profile, which
// "restricted" requires), so "restricted" is warned about and audited.
var podSecurityLabels = map[string]string{
	PodSecurityEnforceLabel:            "baseline",
	"pod-security.kubernetes.io/warn":  "restricted",
	"pod-security.kubernetes.io/audit": "restricted",
}

// podSecurityEnough: a namespace enforcing baseline or stricter is left as
// it is (a site may have made it stricter).
func podSecurityEnough(labels map[string]string) bool {
	switch labels[PodSecurityEnforceLabel] {
	case "baseline", "restricted":
		return true
	}
	return false
}

// withPodSecurity is labels plus podSecurityLabels (which win).
func withPodSecurity(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, podSecurityLabels)
	return out
}

// securePodSecurity labels an existing namespace made before project
// namespaces carried Pod Security labels (or relabelled since).
// Idempotent: server-side apply of the labels alone.
func (c *Cluster) securePodSecurity(ctx context.Context, ns *corev1.Namespace) error {
	if podSecurityEnough(ns.Labels) {
		return nil
	}
	apply := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: maps.Clone(podSecurityLabels)},
	}
	if err := c.Client.Patch(ctx, apply, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("labelling namespace %s for Pod Security: %w", ns.Name, err)
	}
	return nil
}
