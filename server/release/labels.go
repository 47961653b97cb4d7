package release

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// labeller is a Helm post-renderer that adds the driver's labels (cluster
// uuid, project) to every object the chart renders, so that everything
// created for a Magnum cluster can be found by them, whatever the chart
// version labels itself. Only metadata.labels is touched: selectors and
// pod templates stay as the chart wrote them, so no workload or machine
// rolls because of it.
type labeller struct{ labels map[string]string }

func (l labeller) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	out := &bytes.Buffer{}
	dec := utilyaml.NewYAMLOrJSONDecoder(rendered, 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("labelling the rendered chart: %w", err)
		}
		if len(doc) == 0 {
			continue
		}
		obj := unstructured.Unstructured{Object: doc}
		merged := obj.GetLabels()
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, l.labels)
		obj.SetLabels(merged)
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("labelling %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out, nil
}
