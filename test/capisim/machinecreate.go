package capisim

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// machinePlan is a Machine a control plane or a MachineSet is about to
// create, with what its infrastructure and bootstrap objects are cloned from.
type machinePlan struct {
	owner       client.Object
	ownerGVK    schema.GroupVersionKind
	clusterName string
	namePrefix  string
	labels      map[string]string
	annotations map[string]string
	spec        clusterv1.MachineSpec
	// infraTemplate is the machine template the OpenStackMachine is cloned
	// from.
	infraTemplate clusterv1.ContractVersionedObjectReference
	// bootstrapSpec is the KubeadmConfig spec (from the control plane), or
	// nil to clone bootstrapTemplate (a KubeadmConfigTemplate).
	bootstrapSpec     *bootstrapv1.KubeadmConfigSpec
	bootstrapTemplate clusterv1.ContractVersionedObjectReference
}

// generateName appends CAPI's random five-character suffix.
func generateName(prefix string) string {
	// As apiserver's SimpleNameGenerator, which CAPI uses: the base is cut
	// so the name stays a valid label value (63 characters).
	base := prefix + "-"
	if len(base) > 58 {
		base = base[:58]
	}
	return base + utilrand.String(5)
}

// createMachine creates, as KCP and the MachineSet controller do, the
// infrastructure machine and the bootstrap config (both owned by the
// creator until the Machine controller adopts them), then the Machine.
func (s *Simulator) createMachine(ctx context.Context, p machinePlan) (*clusterv1.Machine, error) {
	name := generateName(p.namePrefix)
	ns := p.owner.GetNamespace()
	ownerRef := ownerRefTo(p.owner, p.ownerGVK, true)
	labels := map[string]string{}
	for k, v := range p.labels {
		labels[k] = v
	}
	labels[clusterv1.ClusterNameLabel] = p.clusterName

	tmpl, err := s.getRef(ctx, ns, p.infraTemplate)
	if err != nil {
		return nil, fmt.Errorf("reading machine template %s: %w", p.infraTemplate.Name, err)
	}
	infraSpec, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "template", "spec")
	osm := newUnstructured(gvkOpenStackMachine)
	osm.SetNamespace(ns)
	osm.SetName(name)
	osm.SetLabels(labels)
	osm.SetAnnotations(map[string]string{
		clusterv1.TemplateClonedFromNameAnnotation:      tmpl.GetName(),
		clusterv1.TemplateClonedFromGroupKindAnnotation: gvkOpenStackMachineTemplate.GroupKind().String(),
	})
	osm.SetOwnerReferences([]metav1.OwnerReference{ownerRef})
	if infraSpec == nil {
		infraSpec = map[string]any{}
	}
	osm.Object["spec"] = infraSpec
	if err := s.client.Create(ctx, osm); err != nil {
		return nil, fmt.Errorf("creating OpenStackMachine %s: %w", name, err)
	}

	kc := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: labels, OwnerReferences: []metav1.OwnerReference{ownerRef},
	}}
	if p.bootstrapSpec != nil {
		kc.Spec = *p.bootstrapSpec.DeepCopy()
	} else {
		kct := &bootstrapv1.KubeadmConfigTemplate{}
		if err := s.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: p.bootstrapTemplate.Name}, kct); err != nil {
			return nil, fmt.Errorf("reading KubeadmConfigTemplate %s: %w", p.bootstrapTemplate.Name, err)
		}
		kc.Spec = *kct.Spec.Template.Spec.DeepCopy()
		kc.Annotations = map[string]string{
			clusterv1.TemplateClonedFromNameAnnotation:      kct.Name,
			clusterv1.TemplateClonedFromGroupKindAnnotation: bootstrapv1.GroupVersion.WithKind("KubeadmConfigTemplate").GroupKind().String(),
		}
	}
	if err := s.client.Create(ctx, kc); err != nil {
		return nil, fmt.Errorf("creating KubeadmConfig %s: %w", name, err)
	}

	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: labels, Annotations: p.annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef},
		},
		Spec: *p.spec.DeepCopy(),
	}
	m.Spec.ClusterName = p.clusterName
	m.Spec.Bootstrap = clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
		APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name,
	}}
	m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
		APIGroup: gvkOpenStackMachine.Group, Kind: gvkOpenStackMachine.Kind, Name: name,
	}
	if err := s.client.Create(ctx, m); err != nil {
		return nil, fmt.Errorf("creating Machine %s: %w", name, err)
	}
	return m, nil
}

// machinesOwnedBy lists, from the cache, the Machines whose controller is
// owner, oldest first.
func (s *Simulator) machinesOwnedBy(ctx context.Context, owner client.Object, clusterName string) ([]*clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := s.client.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
		return nil, err
	}
	var out []*clusterv1.Machine
	for i := range list.Items {
		m := &list.Items[i]
		if c := metav1.GetControllerOf(m); c != nil && c.UID == owner.GetUID() {
			out = append(out, m)
		}
	}
	sortOldestFirst(out)
	return out, nil
}

// machinesSettled reports whether the cache shows every Machine the owner
// created or deleted lately.
func (s *Simulator) machinesSettled(owner client.Object, machines []*clusterv1.Machine) bool {
	byName := map[string]*clusterv1.Machine{}
	for _, m := range machines {
		byName[m.Name] = m
	}
	return s.expect.satisfied(owner.GetUID(), func(name string) (bool, bool) {
		m, ok := byName[name]
		return ok, ok && m.DeletionTimestamp != nil
	})
}
