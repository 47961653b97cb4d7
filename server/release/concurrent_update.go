package release

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	jsonpatch "github.com/evanphx/json-patch"
	helmkube "helm.sh/helm/v3/pkg/kube"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"
)

// Helm 3 updates an object it renders as unstructured — every custom
// resource: the Cluster API, CAPO and addon kinds, nearly all of the
// chart — with a JSON merge patch from the previous revision's manifest to
// the new one. It reads the object twice to do that (once to see it
// exists, once more for a three-way merge it does not use for these
// kinds), and a third time when there is nothing to patch. And there is
// nearly always something: Helm adds its ownership labels and annotations
// to the new objects but not to the previous revision's, so every upgrade
// patches every custom resource with values it already has — through the
// conversion and admission webhooks of each, for nothing.
//
// updateObject makes that same update with one read, and without the
// labels and annotations the object already carries with the new value:
// such a key's patch would set it to what it is. The patch it sends is
// otherwise Helm's, from the same previous revision to the same target, so
// a field someone changed by hand is kept or reverted exactly as Helm
// would.
//
// Helm reads a typed object — the chart's Secrets, ServiceAccount, Role and
// RoleBinding, Deployment — twice too, and a third time when its patch is
// empty: once to see it exists, once for the live side of its three-way
// strategic merge, once to refresh it. On a loaded API server those three
// round trips one after another were the longest path of an upgrade
// (docs/benchmarks.md). updateObject makes Helm's own three-way patch
// (the previous revision, the target, the live object) from its one read.

// updateObject brings one object up to date (creating it if it is gone)
// against its previous revision, or against the cluster's state when the
// previous revision did not have it, as Helm does: a custom resource with
// a JSON merge patch (mergePatch), a typed object with Helm's three-way
// strategic merge patch (threeWayPatch), each from one read.
func (c concurrentWrites) updateObject(info, original *resource.Info) (*helmkube.Result, error) {
	helper := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(fieldManager())
	live, err := helper.Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		if _, err := c.Client.Create(helmkube.ResourceList{info}); err != nil {
			return &helmkube.Result{Created: helmkube.ResourceList{info}}, fmt.Errorf("failed to create resource: %w", err)
		}
		return &helmkube.Result{Created: helmkube.ResourceList{info}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("could not get information about the resource: %w", err)
	}
	updated := &helmkube.Result{Updated: helmkube.ResourceList{info}}
	base := live
	if original != nil {
		base = original.Object
	}
	patchType := types.MergePatchType
	var patch []byte
	if isUnstructured(info) {
		patch, err = mergePatch(base, info.Object, live)
	} else {
		patchType = types.StrategicMergePatchType
		patch, err = threeWayPatch(base, info, live)
	}
	if err != nil {
		return updated, fmt.Errorf("failed to create patch for %q: %w", info.Name, err)
	}
	if len(patch) == 0 || string(patch) == "{}" {
		// Helm refreshes the object from the cluster here; it just was.
		return updated, info.Refresh(live, true)
	}
	obj, err := helper.Patch(info.Namespace, info.Name, patchType, patch, nil)
	if err != nil {
		return updated, fmt.Errorf("cannot patch %q with kind %s: %w", info.Name, info.Mapping.GroupVersionKind.Kind, err)
	}
	return updated, info.Refresh(obj, true)
}

// isUnstructured says whether Helm updates the object with a JSON merge
// patch (it has no Go type in Kubernetes' scheme), as createPatch decides.
func isUnstructured(info *resource.Info) bool {
	_, ok := helmkube.AsVersioned(info).(runtime.Unstructured)
	return ok
}

// ownUpdate says whether updateObject updates the object: every kind but
// a CustomResourceDefinition of the old v1beta1 API, which Helm patches
// its own way (and charts of this driver never render).
func ownUpdate(info *resource.Info) bool {
	_, oldCRD := helmkube.AsVersioned(info).(*apiextv1beta1.CustomResourceDefinition)
	return !oldCRD
}

// threeWayPatch is Helm's strategic merge patch of a typed object, from
// base (its previous revision) to target's object, against live.
func threeWayPatch(base runtime.Object, target *resource.Info, live runtime.Object) ([]byte, error) {
	oldData, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(target.Object)
	if err != nil {
		return nil, err
	}
	liveData, err := json.Marshal(live)
	if err != nil {
		return nil, err
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(helmkube.AsVersioned(target))
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateThreeWayMergePatch(oldData, newData, liveData, meta, true)
}

// mergePatch is the JSON merge patch from base to target, leaving out the
// labels and annotations live already has with target's value.
func mergePatch(base, target, live runtime.Object) ([]byte, error) {
	b, err := runtime.DefaultUnstructuredConverter.ToUnstructured(base)
	if err != nil {
		return nil, err
	}
	baseObj := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(b)}
	t, err := runtime.DefaultUnstructuredConverter.ToUnstructured(target)
	if err != nil {
		return nil, err
	}
	l, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return nil, err
	}
	targetObj, liveObj := &unstructured.Unstructured{Object: t}, &unstructured.Unstructured{Object: l}
	baseObj.SetLabels(alreadySet(baseObj.GetLabels(), targetObj.GetLabels(), liveObj.GetLabels()))
	baseObj.SetAnnotations(alreadySet(baseObj.GetAnnotations(), targetObj.GetAnnotations(), liveObj.GetAnnotations()))
	oldData, err := json.Marshal(baseObj.Object)
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(oldData, newData)
}

// alreadySet is base with every key whose value target and live agree on
// set to that value.
func alreadySet(base, target, live map[string]string) map[string]string {
	for k, v := range target {
		if lv, ok := live[k]; ok && lv == v {
			if base == nil {
				base = map[string]string{}
			}
			base[k] = v
		}
	}
	return base
}

// fieldManager is the field manager Helm's client writes with.
func fieldManager() string {
	if helmkube.ManagedFieldsManager != "" {
		return helmkube.ManagedFieldsManager
	}
	if os.Args[0] == "" {
		return "unknown"
	}
	return filepath.Base(os.Args[0])
}
