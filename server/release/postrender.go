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

// nodeGroupLabel is the label the chart puts on a node group's
// MachineDeployment, whose value is the node group's chart name.
const nodeGroupLabel = "capi.stackhpc.com/node-group"

// decorator is a Helm post-renderer. It adds the driver's labels (cluster
// uuid, project) to every object the chart renders, so that everything
// created for a Magnum cluster can be found by them, whatever the chart
// version labels itself; and it adds annotations the chart has no value for
// (the cluster autoscaler's capacity annotations) to node groups'
// MachineDeployments, found by group, kind and node-group label in any
// Cluster API version (v1beta1 and v1beta2 keep them in the same metadata
// fields, which is all this touches). Because it runs on
// every install and upgrade, what it adds is part of every revision: Helm
// owns it, a later upgrade renders it again, and Helm's three-way merge
// removes what a later revision no longer has. Only metadata is touched:
// selectors, pod templates and machine templates stay as the chart wrote
// them, so no workload or machine rolls because of it. The one exception
// is specPatches (postrender_patches.go): spec fields the chart has no
// value for, in objects whose spec rolls no machine by itself (the API
// server load balancer's flavor and zone in the OpenStackCluster, the
// control plane's certificate renewal in the KubeadmControlPlane).
type decorator struct {
	labels map[string]string
	// machineAnnotations are by node group (the node-group label's value).
	machineAnnotations map[string]map[string]string
	specPatches        []SpecPatch
}

func (d decorator) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	out := &bytes.Buffer{}
	dec := utilyaml.NewYAMLOrJSONDecoder(rendered, 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("post-rendering the chart: %w", err)
		}
		if len(doc) == 0 {
			continue
		}
		obj := unstructured.Unstructured{Object: doc}
		d.decorate(&obj)
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("post-rendering %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out, nil
}

// decorate adds d's labels to obj, and its annotations when obj is a node
// group's MachineDeployment. The chart's own labels and annotations of the
// same name give way (the autoscaler's bounds are the chart's and are not
// among ours).
func (d decorator) decorate(obj *unstructured.Unstructured) {
	if len(d.labels) > 0 {
		merged := obj.GetLabels()
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, d.labels)
		obj.SetLabels(merged)
	}
	patchSpec(obj, d.specPatches)
	if obj.GetKind() != "MachineDeployment" || obj.GroupVersionKind().Group != "cluster.x-k8s.io" {
		return
	}
	add := d.machineAnnotations[obj.GetLabels()[nodeGroupLabel]]
	if len(add) == 0 {
		return
	}
	merged := obj.GetAnnotations()
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, add)
	obj.SetAnnotations(merged)
}
