package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeRegistration is what a node group's kubelet is told about its node's
// labels and taints: joinConfiguration.nodeRegistration of its
// KubeadmConfigTemplate.
type NodeRegistration struct {
	Labels string // kubeletExtraArgs node-labels, as the chart joins them
	Taints []any
}

// JoinRegistration reads the NodeRegistration of the KubeadmConfigTemplate a
// node group's MachineDeployment (<stackID>-<group>) references. The chart
// keeps superseded templates, so only the reference says which is in use.
func JoinRegistration(ctx context.Context, kc client.Client, ns, stackID, group string) (NodeRegistration, error) {
	md := &unstructured.Unstructured{}
	md.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachineDeployment"})
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: stackID + "-" + group}, md); err != nil {
		return NodeRegistration{}, fmt.Errorf("MachineDeployment of node group %s: %w", group, err)
	}
	ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "bootstrap", "configRef", "name")
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Kind: "KubeadmConfigTemplate"})
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref}, tmpl); err != nil {
		return NodeRegistration{}, fmt.Errorf("KubeadmConfigTemplate %q of node group %s: %w", ref, group, err)
	}
	path := []string{"spec", "template", "spec", "joinConfiguration", "nodeRegistration"}
	labels, _, _ := unstructured.NestedString(tmpl.Object, append(path, "kubeletExtraArgs", "node-labels")...)
	taints, _, _ := unstructured.NestedSlice(tmpl.Object, append(path, "taints")...)
	return NodeRegistration{Labels: labels, Taints: taints}, nil
}
