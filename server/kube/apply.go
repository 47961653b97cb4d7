package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// FieldManager is the server-side apply field manager for everything the
// driver writes itself. It is the StackHPC driver's, so fields it set on
// clusters we adopt stay owned by the same manager.
const FieldManager = "magnum"

// EnsureNamespace creates the namespace if it is missing, with labels and
// the Pod Security labels, and grants the sidecar its rights there
// (BindNamespace). An existing namespace only gets the Pod Security labels
// if it does not enforce baseline or stricter (other clusters of the
// project live there). A namespace this
// process already made or found costs no request: the driver never
// deletes one, and an operation that finds it gone anyway (its Lease
// cannot be made: NamespaceMissing) forgets it and ensures it again.
func (c *Cluster) EnsureNamespace(ctx context.Context, name string, labels map[string]string) error {
	b := &c.bindings
	b.mu.Lock()
	present := b.present[name]
	b.mu.Unlock()
	if !present {
		if err := c.ensureNamespace(ctx, name, labels); err != nil {
			return err
		}
		b.mu.Lock()
		if b.present == nil {
			b.present = map[string]bool{}
		}
		b.present[name] = true
		b.mu.Unlock()
	}
	return c.BindNamespace(ctx, name)
}

func (c *Cluster) ensureNamespace(ctx context.Context, name string, labels map[string]string) error {
	var ns corev1.Namespace
	err := c.Client.Get(ctx, client.ObjectKey{Name: name}, &ns)
	if err == nil {
		return c.securePodSecurity(ctx, &ns)
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading namespace %s: %w", name, err)
	}
	ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: withPodSecurity(labels)}}
	if err := c.Client.Create(ctx, &ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// ApplySecret writes a Secret with server-side apply (force: the driver owns
// these Secrets outright), so a retry converges whatever state it finds.
func (c *Cluster) ApplySecret(ctx context.Context, s *corev1.Secret) error {
	obj := s.DeepCopy()
	obj.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	obj.ResourceVersion = ""
	obj.ManagedFields = nil
	if err := c.Client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// GetSecret reads one Secret; (nil, nil) when it does not exist.
func (c *Cluster) GetSecret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s/%s: %w", ns, name, err)
	}
	return &s, nil
}

// HasSecrets says whether ns holds a Secret with every label of match.
func (c *Cluster) HasSecrets(ctx context.Context, ns string, match map[string]string) (bool, error) {
	var list corev1.SecretList
	if err := c.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(match)}, client.Limit(1)); err != nil {
		return false, fmt.Errorf("listing secrets in %s: %w", ns, err)
	}
	return len(list.Items) > 0, nil
}

// DeleteSecrets deletes the Secrets in ns matching the label set and returns
// how many it deleted. Already-gone Secrets are not an error.
func (c *Cluster) DeleteSecrets(ctx context.Context, ns string, match map[string]string) (int, error) {
	var list corev1.SecretList
	if err := c.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(match)}); err != nil {
		return 0, fmt.Errorf("listing secrets in %s: %w", ns, err)
	}
	deleted := 0
	for i := range list.Items {
		if err := c.Client.Delete(ctx, &list.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting secret %s/%s: %w", ns, list.Items[i].Name, err)
		}
		deleted++
	}
	return deleted, nil
}

// AnnotateMachine sets one annotation on a CAPI Machine.
func (c *Cluster) AnnotateMachine(ctx context.Context, ns, name, key, value string) error {
	m := &clusterv1.Machine{}
	m.Namespace, m.Name = ns, name
	return c.annotate(ctx, m, "machine", key, value)
}

// AnnotateCluster sets one annotation on a CAPI Cluster; a Cluster already
// gone is not an error.
func (c *Cluster) AnnotateCluster(ctx context.Context, ns, name, key, value string) error {
	cl := &clusterv1.Cluster{}
	cl.Namespace, cl.Name = ns, name
	if err := c.annotate(ctx, cl, "cluster", key, value); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// annotate sets one annotation with a merge patch (it never conflicts with
// the controllers' own writes).
func (c *Cluster) annotate(ctx context.Context, obj client.Object, kind, key, value string) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value))
	if err := c.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("annotating %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// DeleteSecret deletes one Secret; already gone is not an error.
func (c *Cluster) DeleteSecret(ctx context.Context, ns, name string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting secret %s/%s: %w", ns, name, err)
	}
	return nil
}
