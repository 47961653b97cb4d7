package capicontrollers

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/secret"
)

// The addon provider's phases (capi_addons/models/v1alpha1/base.py).
const (
	phasePending      = "Pending"
	phaseInstalling   = "Installing"
	phaseUpgrading    = "Upgrading"
	phaseDeployed     = "Deployed"
	phaseFailed       = "Failed"
	phaseUninstalling = "Uninstalling"
)

// Labels the addon provider adds.
const (
	labelAddonCluster          = "addons.stackhpc.com/cluster"
	labelAddonReleaseNamespace = "addons.stackhpc.com/release-namespace"
	labelAddonReleaseName      = "addons.stackhpc.com/release-name"
	labelAddonWatch            = "addons.stackhpc.com/watch"
)

// annotationLastHandled is where kopf, which the addon provider runs on,
// keeps the spec it last handled (its "diffbase").
const annotationLastHandled = "addons.stackhpc.com/last-handled-configuration"

// addonReconciler stands in for the azimuth cluster-api-addon-provider
// (capi_addons/operator.py, Python upstream) for one kind (HelmRelease or
// Manifests): the Helm release on the workload cluster is pretended, its
// phases, labels, owner reference and finalizer are the provider's.
type addonReconciler struct {
	*Provider
	gvk schema.GroupVersionKind
}

func (r *addonReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return r.settle(r.reconcile(ctx, req))
}

func (r *addonReconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	addon := newUnstructured(r.gvk)
	if err := r.client.Get(ctx, req.NamespacedName, addon); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	clusterName, _, _ := unstructured.NestedString(addon.Object, "spec", "clusterName")
	cluster, err := r.getCluster(ctx, addon.GetNamespace(), clusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if addon.GetDeletionTimestamp() != nil {
		return r.reconcileDelete(ctx, addon, cluster)
	}
	if added, err := r.addFinalizer(ctx, addon, addonFinalizer); err != nil || added {
		return ctrl.Result{}, err
	}
	phase, _, _ := unstructured.NestedString(addon.Object, "status", "phase")
	if phase == "" {
		// init_status: the first thing the operator does.
		original := addon.DeepCopy()
		_ = unstructured.SetNestedField(addon.Object, phasePending, "status", "phase")
		return after(r.opts.Step), r.patchStatus(ctx, addon, original)
	}
	desired, err := handledConfiguration(addon)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The operator acts on changes to its addons, not to their Clusters:
	// an addon whose spec was handled has nothing left to do.
	if addon.GetAnnotations()[annotationLastHandled] == desired && (phase == phaseDeployed || phase == phaseFailed) {
		return ctrl.Result{}, nil
	}
	// The operator needs the Cluster and its infrastructure cluster; until
	// they exist it retries (kopf TemporaryError).
	if cluster == nil || !cluster.Spec.InfrastructureRef.IsDefined() {
		return after(r.opts.Step), nil
	}
	infra := newUnstructured(gvkOpenStackCluster)
	err = r.client.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Spec.InfrastructureRef.Name}, infra)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return after(r.opts.Step), nil
		}
		return ctrl.Result{}, err
	}
	if err := r.initMetadata(ctx, addon, cluster, infra); err != nil {
		return ctrl.Result{}, err
	}
	bootstrap, _, _ := unstructured.NestedBool(addon.Object, "spec", "bootstrap")
	if !clusterReadyFor(cluster, bootstrap) {
		return after(r.opts.Step), nil
	}
	if paused, _, _ := unstructured.NestedBool(addon.Object, "spec", "paused"); paused {
		return ctrl.Result{}, nil
	}
	kubeconfig := &corev1.Secret{}
	if err := r.direct.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}, kubeconfig); err != nil {
		if apierrors.IsNotFound(err) {
			return after(r.opts.Step), nil
		}
		return ctrl.Result{}, err
	}
	return r.installOrUpgrade(ctx, addon, cluster, phase, desired)
}

// handledConfiguration is what kopf records as the last handled
// configuration of an addon: its spec, as JSON.
func handledConfiguration(addon *unstructured.Unstructured) (string, error) {
	spec, _, _ := unstructured.NestedMap(addon.Object, "spec")
	b, err := json.Marshal(map[string]any{"spec": spec})
	return string(b), err
}

// clusterReadyFor is the operator's gate: bootstrap addons wait for the
// control plane to be initialized, the others for the Cluster to be Ready
// (v1beta1) or Available (v1beta2).
func clusterReadyFor(c *clusterv1.Cluster, bootstrap bool) bool {
	if bootstrap {
		return conditions.IsTrue(c, clusterv1.ClusterControlPlaneInitializedCondition)
	}
	return conditions.IsTrue(c, clusterv1.ClusterAvailableCondition) || conditions.IsTrue(c, clusterv1.ReadyCondition)
}

// initMetadata is the operator's init_metadata: the Cluster owns the addon,
// and labels name the cluster, the release and the Secrets and ConfigMaps
// the addon reads (which get the watch label).
func (r *addonReconciler) initMetadata(ctx context.Context, addon *unstructured.Unstructured, cluster *clusterv1.Cluster, infra *unstructured.Unstructured) error {
	secrets, configMaps := addonSources(addon)
	if kind, _, _ := unstructured.NestedString(infra.Object, "spec", "identityRef", "kind"); kind == "" || kind == "Secret" {
		if name, _, _ := unstructured.NestedString(infra.Object, "spec", "identityRef", "name"); name != "" {
			secrets = append(secrets, name)
		}
	}
	changed, err := r.ensureMeta(ctx, addon, func() bool {
		ref := metav1.OwnerReference{APIVersion: gvkCluster.GroupVersion().String(), Kind: gvkCluster.Kind,
			Name: cluster.Name, UID: cluster.UID, BlockOwnerDeletion: ptr.To(true)}
		changed := false
		if !hasOwner(addon, cluster.UID) {
			addon.SetOwnerReferences(append(addon.GetOwnerReferences(), ref))
			changed = true
		}
		labels := addon.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		want := map[string]string{
			labelAddonCluster:          cluster.Name,
			labelAddonReleaseNamespace: nestedString(addon, "spec", "targetNamespace"),
			labelAddonReleaseName:      releaseName(addon),
		}
		for _, s := range secrets {
			want[s+".secret.addons.stackhpc.com/uses"] = ""
		}
		for _, c := range configMaps {
			want[c+".configmap.addons.stackhpc.com/uses"] = ""
		}
		for k, v := range want {
			if old, ok := labels[k]; !ok || old != v {
				labels[k] = v
				changed = true
			}
		}
		addon.SetLabels(labels)
		return changed
	})
	if err != nil || !changed {
		return err
	}
	// The referenced Secrets and ConfigMaps are labelled for the
	// operator's watches, once, when the addon's labels change.
	for _, name := range secrets {
		if err := r.labelWatched(ctx, &corev1.Secret{}, addon.GetNamespace(), name); err != nil {
			return err
		}
	}
	for _, name := range configMaps {
		if err := r.labelWatched(ctx, &corev1.ConfigMap{}, addon.GetNamespace(), name); err != nil {
			return err
		}
	}
	return nil
}

func (r *addonReconciler) labelWatched(ctx context.Context, obj client.Object, namespace, name string) error {
	if err := r.direct.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if _, ok := obj.GetLabels()[labelAddonWatch]; ok {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:""}}}`, labelAddonWatch))
	return client.IgnoreNotFound(r.direct.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)))
}

// addonSources lists the Secrets and ConfigMaps an addon's values or
// manifest sources name.
func addonSources(addon *unstructured.Unstructured) (secrets, configMaps []string) {
	for _, field := range []string{"valuesSources", "manifestSources"} {
		sources, _, _ := unstructured.NestedSlice(addon.Object, "spec", field)
		for _, src := range sources {
			m, ok := src.(map[string]any)
			if !ok {
				continue
			}
			if s, ok := m["secret"].(map[string]any); ok {
				if name, ok := s["name"].(string); ok && name != "" {
					secrets = append(secrets, name)
				}
			}
			if c, ok := m["configMap"].(map[string]any); ok {
				if name, ok := c["name"].(string); ok && name != "" {
					configMaps = append(configMaps, name)
				}
			}
		}
	}
	return secrets, configMaps
}

func releaseName(addon *unstructured.Unstructured) string {
	if name := nestedString(addon, "spec", "releaseName"); name != "" {
		return name
	}
	return addon.GetName()
}

func hasOwner(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// installOrUpgrade moves the addon through Installing or Upgrading to
// Deployed (or Failed, with the addon-failure fault), one step each, when
// its spec differs from the one last handled.
func (r *addonReconciler) installOrUpgrade(ctx context.Context, addon *unstructured.Unstructured, cluster *clusterv1.Cluster, phase, desired string) (ctrl.Result, error) {
	if d := r.pace.wait(addon.GetUID(), "release"); d > 0 {
		return after(d), nil
	}
	r.pace.stepped(addon.GetUID(), "release")
	revision, _, _ := unstructured.NestedInt64(addon.Object, "status", "revision")
	original := addon.DeepCopy()
	if phase != phaseInstalling && phase != phaseUpgrading {
		next := phaseInstalling
		if revision > 0 {
			next = phaseUpgrading
		}
		_ = unstructured.SetNestedField(addon.Object, next, "status", "phase")
		// The operator writes its status without defaults: no message
		// unless Failed.
		unstructured.RemoveNestedField(addon.Object, "status", "failureMessage")
		return after(r.opts.Step), r.patchStatus(ctx, addon, original)
	}
	if fails, msg := r.faultsFor(cluster).addonFails(addon.GetName()); fails {
		if msg == "" {
			msg = fmt.Sprintf("Error: INSTALLATION FAILED: chart %q version %q not found in %s repository",
				nestedString(addon, "spec", "chart", "name"), nestedString(addon, "spec", "chart", "version"), nestedString(addon, "spec", "chart", "repo"))
		}
		_ = unstructured.SetNestedField(addon.Object, phaseFailed, "status", "phase")
		_ = unstructured.SetNestedField(addon.Object, msg, "status", "failureMessage")
	} else {
		_ = unstructured.SetNestedField(addon.Object, phaseDeployed, "status", "phase")
		unstructured.RemoveNestedField(addon.Object, "status", "failureMessage")
		_ = unstructured.SetNestedField(addon.Object, revision+1, "status", "revision")
	}
	if err := r.patchStatus(ctx, addon, original); err != nil {
		return ctrl.Result{}, err
	}
	_, err := r.ensureMeta(ctx, addon, func() bool {
		annotations := addon.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[annotationLastHandled] = desired
		addon.SetAnnotations(annotations)
		return true
	})
	return ctrl.Result{}, err
}

// reconcileDelete is the operator's delete handler: nothing to uninstall
// when the Cluster is gone or deleting, or its kubeconfig is gone;
// otherwise Uninstalling for a step.
func (r *addonReconciler) reconcileDelete(ctx context.Context, addon *unstructured.Unstructured, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(addon, addonFinalizer) {
		return ctrl.Result{}, nil
	}
	release := func() (ctrl.Result, error) {
		r.pace.forget(addon.GetUID())
		return ctrl.Result{}, r.removeFinalizer(ctx, addon, addonFinalizer)
	}
	paused, _, _ := unstructured.NestedBool(addon.Object, "spec", "paused")
	if cluster == nil || cluster.Status.Phase == string(clusterv1.ClusterPhaseDeleting) || paused {
		return release()
	}
	kubeconfig := &corev1.Secret{}
	if err := r.direct.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: secret.Name(cluster.Name, secret.Kubeconfig)}, kubeconfig); err != nil {
		if apierrors.IsNotFound(err) {
			return release()
		}
		return ctrl.Result{}, err
	}
	if phase, _, _ := unstructured.NestedString(addon.Object, "status", "phase"); phase != phaseUninstalling {
		original := addon.DeepCopy()
		_ = unstructured.SetNestedField(addon.Object, phaseUninstalling, "status", "phase")
		r.pace.stepped(addon.GetUID(), "uninstall")
		return after(r.opts.Step), r.patchStatus(ctx, addon, original)
	}
	if d := r.pace.wait(addon.GetUID(), "uninstall"); d > 0 {
		return after(d), nil
	}
	return release()
}
