package helmvalues

import (
	"fmt"
	"strings"
)

// Adoption of releases another driver installed (the StackHPC
// magnum-capi-helm driver installs the same chart under the same names).
//
// The danger in taking such a release over is machine churn: any difference
// between this driver's values and the deployed ones that reaches a machine
// template (registry mirrors, kubeadm configuration, node labels, root
// volumes, ...) gives the chart a new OpenStackMachineTemplate or
// KubeadmConfigTemplate name, and Cluster API replaces every machine. So a
// release without this driver's marker is upgraded conservatively: the
// deployed values are kept, the keys the chart ignores are translated to the
// ones it reads (without changing what it renders), and only what Magnum
// changes (node group counts and bounds, node groups added or removed, the
// control plane count) is taken from the rendered values. The first change
// that replaces every machine anyway (a new Kubernetes version, image or
// chart version: an upgrade) takes the cluster over fully: from then on it
// gets this driver's values like a cluster it created.

// ValuesAnnotation is the Cluster annotation (set through the chart's
// clusterAnnotations value, which touches nothing but the Cluster's metadata)
// that says whose values a release carries. A release without it was
// installed by another driver.
const ValuesAnnotation = "magnum-capi/values"

// Values of ValuesAnnotation.
const (
	// ValuesManaged: the values are this driver's full rendering.
	ValuesManaged = "managed"
	// ValuesAdopted: another driver's values, kept and maintained
	// conservatively by this driver.
	ValuesAdopted = "adopted"
)

// ValuesMode is the marker among a Cluster's annotations: ValuesManaged,
// ValuesAdopted, or "" for a release another driver wrote.
func ValuesMode(annotations map[string]string) string {
	return annotations[ValuesAnnotation]
}

// DeployedValuesMode is ValuesMode read from a release's values.
func DeployedValuesMode(values map[string]any) string {
	annotations, _ := values["clusterAnnotations"].(map[string]any)
	mode, _ := annotations[ValuesAnnotation].(string)
	return mode
}

// MarkManaged sets the managed marker on values this driver rendered in
// full, and returns them.
func MarkManaged(values map[string]any) map[string]any {
	setMarker(values, ValuesManaged)
	return values
}

func setMarker(values map[string]any, mode string) {
	annotations, _ := values["clusterAnnotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		values["clusterAnnotations"] = annotations
	}
	annotations[ValuesAnnotation] = mode
}

// AdoptInput is what Adopt decides from.
type AdoptInput struct {
	// Deployed are the deployed release's user-supplied values (as
	// `helm get values` shows them) and DeployedChart its chart version.
	Deployed      map[string]any
	DeployedChart string
	// Rendered are Build's values for the cluster as Magnum describes it
	// now, after the requested change, and RenderedChart Build's chart
	// version.
	Rendered      map[string]any
	RenderedChart string
}

// Adoption is what to apply to a deployed release.
type Adoption struct {
	// Values to apply, carrying the marker of Mode.
	Values map[string]any
	// ChartVersion to apply.
	ChartVersion string
	// Mode is ValuesManaged (the full rendering) or ValuesAdopted (the
	// deployed values, translated, with Magnum's counts).
	Mode string
	// Notes tell the operator why this mode and what was translated; empty
	// for a release this driver rendered.
	Notes []string
}

// AdoptError: the deployed values cannot be maintained conservatively.
type AdoptError struct{ Problem string }

func (e *AdoptError) Error() string {
	return "deployed release values: " + e.Problem
}

// FailedPrecondition classifies the error for the gRPC boundary: the
// deployed state, not the request, is at fault.
func (e *AdoptError) FailedPrecondition() bool { return true }

// Adopt decides what to apply to a deployed release. Values this driver
// rendered (the managed marker) are replaced by the rendered ones. Values
// another driver wrote, or adopted ones, are kept and get only Magnum's
// counts, unless the Kubernetes version, the machine image or the chart
// version changes: that replaces every machine anyway, so the cluster is
// then taken over fully. The inputs are not modified.
func Adopt(in AdoptInput) (Adoption, error) {
	mode := DeployedValuesMode(in.Deployed)
	if mode == ValuesManaged {
		return full(in, nil), nil
	}
	owner := "another driver"
	if mode == ValuesAdopted {
		owner = "another driver (adopted)"
	}
	if changes := machineWideChanges(in); len(changes) > 0 {
		return full(in, []string{fmt.Sprintf(
			"release values written by %s are replaced by this driver's: this is an upgrade (%s), when machines are replaced anyway",
			owner, strings.Join(changes, ", "))}), nil
	}
	values, ok := deepCopy(in.Deployed).(map[string]any)
	if !ok || values == nil {
		values = map[string]any{}
	}
	notes := []string{fmt.Sprintf(
		"release values written by %s are kept (no machine is replaced); only node group and control plane counts follow Magnum until an upgrade takes the cluster over",
		owner)}
	notes = append(notes, translate(values, in.DeployedChart)...)
	counted, err := overlayCounts(values, in.Rendered)
	if err != nil {
		return Adoption{}, err
	}
	notes = append(notes, counted...)
	setMarker(values, ValuesAdopted)
	return Adoption{Values: values, ChartVersion: in.DeployedChart, Mode: ValuesAdopted, Notes: notes}, nil
}

// full is the rendered values with the managed marker.
func full(in AdoptInput, notes []string) Adoption {
	values, _ := deepCopy(in.Rendered).(map[string]any)
	if values == nil {
		values = map[string]any{}
	}
	return Adoption{Values: MarkManaged(values), ChartVersion: in.RenderedChart, Mode: ValuesManaged, Notes: notes}
}

// machineWideChanges lists what changes every machine template from the
// deployed values to the rendered ones: the Kubernetes version, the machine
// image, the chart (whose templates may render machines differently).
func machineWideChanges(in AdoptInput) []string {
	var out []string
	for _, key := range []string{"kubernetesVersion", "machineImageId"} {
		was, now := scalarString(in.Deployed[key]), scalarString(in.Rendered[key])
		if key == "kubernetesVersion" {
			was, now = strings.TrimPrefix(was, "v"), strings.TrimPrefix(now, "v")
		}
		if was != now {
			out = append(out, fmt.Sprintf("%s %s -> %s", key, orNone(was), orNone(now)))
		}
	}
	if in.DeployedChart != in.RenderedChart {
		out = append(out, fmt.Sprintf("chart version %s -> %s", orNone(in.DeployedChart), orNone(in.RenderedChart)))
	}
	return out
}

func scalarString(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// deepCopy copies a values tree: maps and lists are copied, scalars shared.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, child := range t {
			out[k] = deepCopy(child)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, child := range t {
			out[i] = deepCopy(child)
		}
		return out
	case []string:
		return append([]string(nil), t...)
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, s := range t {
			out[k] = s
		}
		return out
	}
	return v
}
