package release

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SpecPatch is a setting the chart has no value for: Spec is merged into
// the spec of every rendered object of Kind in API group Group and, when
// Version is not empty, of that API version (maps key by key; anything
// else, lists included, replaced).
// The post-renderer writes it, so it is part of every revision the release
// gets and Helm's three-way merge takes it away again when a later revision
// has no such patch.
type SpecPatch struct {
	Group, Version, Kind string
	Spec                 map[string]any
}

// patchSpec merges the patches of obj's group and kind into its spec.
func patchSpec(obj *unstructured.Unstructured, patches []SpecPatch) {
	gvk := obj.GroupVersionKind()
	for _, p := range patches {
		if p.Group != gvk.Group || p.Kind != gvk.Kind || (p.Version != "" && p.Version != gvk.Version) || len(p.Spec) == 0 {
			continue
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
		}
		obj.Object["spec"] = mergeInto(spec, p.Spec)
	}
}

// mergeInto merges patch into dst (which it changes and returns); patch's
// own maps are copied, never shared with the rendered object.
func mergeInto(dst, patch map[string]any) map[string]any {
	for key, value := range patch {
		patchMap, isMap := value.(map[string]any)
		if !isMap {
			dst[key] = value
			continue
		}
		existing, _ := dst[key].(map[string]any)
		if existing == nil {
			existing = map[string]any{}
		}
		dst[key] = mergeInto(existing, maps.Clone(patchMap))
	}
	return dst
}
