package helmvalues

import (
	"bytes"
	"encoding/json"
	"testing"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
)

// assertKubeadmSchema decodes every kubeadmConfigSpec fragment the values
// carry into Cluster API's v1beta1 type (the version the chart renders),
// refusing unknown fields, so a misspelt or mistyped field fails here rather
// than being pruned by the API server.
func assertKubeadmSchema(t *testing.T, values map[string]any) {
	t.Helper()
	var fragments []any
	if v, ok := lookup(values, "controlPlane", "kubeadmConfigSpec"); ok {
		fragments = append(fragments, v)
	}
	if v, ok := lookup(values, "nodeGroupDefaults", "kubeadmConfigSpec"); ok {
		fragments = append(fragments, v)
	}
	if groups, ok := values["nodeGroups"].([]any); ok {
		for _, g := range groups {
			if m, ok := g.(map[string]any); ok && m["kubeadmConfigSpec"] != nil {
				fragments = append(fragments, m["kubeadmConfigSpec"])
			}
		}
	}
	for _, fragment := range fragments {
		data, err := json.Marshal(fragment)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var spec bootstrapv1beta1.KubeadmConfigSpec
		if err := dec.Decode(&spec); err != nil {
			t.Errorf("kubeadmConfigSpec %s is not a CAPI v1beta1 KubeadmConfigSpec: %v", data, err)
		}
	}
}
