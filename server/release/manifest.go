package release

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// ObjectSpec is the spec of the first object of kind in API group group
// the revision rendered (post-renderer included), nil when it rendered
// none. Only the documents that name kind are decoded.
func (r *Release) ObjectSpec(group, kind string) (map[string]any, error) {
	for _, doc := range strings.Split(r.manifest, "\n---") {
		if !strings.Contains(doc, "kind: "+kind) {
			continue
		}
		var obj struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Spec       map[string]any `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("reading the %s of release %s/%s revision %d: %w", kind, r.Namespace, r.Name, r.Revision, err)
		}
		if obj.Kind == kind && strings.HasPrefix(obj.APIVersion, group+"/") {
			return obj.Spec, nil
		}
	}
	return nil, nil
}
