package helmvalues_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

const (
	adoptRelease   = "kubernetes-cluster-with-a-long-5jc1mbt6pjhx"
	adoptNamespace = "magnum-2c8f0f5a8d8e4c5bb9f31e2d3c4b5a69"
)

// TestAdoptKeepsMachineTemplates renders the StackHPC driver's deployed
// values and what Adopt makes of them through the test chart (the real
// chart's objects and template checksums), and lists every field of every
// object that differs. The translations must change nothing but what each
// case expects: no machine template gets a new name, no KubeadmControlPlane
// or MachineDeployment template changes, so Cluster API replaces no machine.
func TestAdoptKeepsMachineTemplates(t *testing.T) {
	base := readDeployed(t)
	withoutLongGroup := func(v map[string]any) {
		// StackHPC does not shorten this group's name; Adopt renames it
		// (TestAdoptLongNodeGroupName), which is not what these cases test.
		groups := v["nodeGroups"].([]any)
		v["nodeGroups"] = groups[:2]
	}
	tests := []struct {
		name     string
		deployed func(v map[string]any)
		rendered func(v map[string]any)
		want     []string
	}{
		{"translations only", withoutLongGroup, withoutLongGroup, []string{
			// The marker: metadata only.
			"Cluster/" + adoptRelease + ": .metadata.annotations.magnum-capi/values",
			// The label api_master_lb_allowed_cidrs takes effect, as
			// intended; the load balancer is no machine.
			"OpenStackCluster/" + adoptRelease + ": .spec.apiServerLoadBalancer.allowedCIDRs",
		}},
		{"resize", withoutLongGroup, func(v map[string]any) {
			withoutLongGroup(v)
			setCount(v, "default-worker", 5)
		}, []string{
			"Cluster/" + adoptRelease + ": .metadata.annotations.magnum-capi/values",
			"OpenStackCluster/" + adoptRelease + ": .spec.apiServerLoadBalancer.allowedCIDRs",
			"MachineDeployment/" + adoptRelease + "-default-worker: .spec.replicas",
		}},
		{"string autoscale flag, null and empty keys", func(v map[string]any) {
			withoutLongGroup(v)
			g := v["nodeGroups"].([]any)[0].(map[string]any)
			g["autoscale"], g["machineCountMin"], g["machineCountMax"] = "true", 1, 4
			delete(v["apiServer"].(map[string]any), "allowedCidrs")
			v["clusterNetworking"].(map[string]any)["dnsNameservers"] = nil
		}, func(v map[string]any) {
			withoutLongGroup(v)
			g := v["nodeGroups"].([]any)[0].(map[string]any)
			g["autoscale"], g["machineCountMin"], g["machineCountMax"] = true, 1, 4
		}, []string{
			"Cluster/" + adoptRelease + ": .metadata.annotations.magnum-capi/values",
		}},
		{"control plane resize", withoutLongGroup, func(v map[string]any) {
			withoutLongGroup(v)
			v["controlPlane"].(map[string]any)["machineCount"] = 5
		}, []string{
			"Cluster/" + adoptRelease + ": .metadata.annotations.magnum-capi/values",
			"OpenStackCluster/" + adoptRelease + ": .spec.apiServerLoadBalancer.allowedCIDRs",
			"KubeadmControlPlane/" + adoptRelease + "-control-plane: .spec.replicas",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deployed := copyValues(t, base)
			tt.deployed(deployed)
			// What Build would render after the operation, reduced to what
			// Adopt reads from it: the same cluster, counts from Magnum.
			rendered := copyValues(t, deployed)
			tt.rendered(rendered)
			a, err := helmvalues.Adopt(helmvalues.AdoptInput{Deployed: deployed, DeployedChart: "0.27.0", Rendered: rendered, RenderedChart: "0.27.0"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Mode != helmvalues.ValuesAdopted {
				t.Fatalf("mode %s", a.Mode)
			}
			got := objectDiff(t, render(t, deployed), render(t, a.Values))
			sort.Strings(tt.want)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rendered objects differ in:\n  %s\nwant only:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestAdoptLongNodeGroupName: StackHPC names a node group by its sanitized
// name even when "<release>-<name>" exceeds 63 characters (the chart then
// cuts the MachineDeployment's name; StackHPC's status never finds it). This
// driver's name for the group is shorter, so adoption replaces that group's
// objects, and only those, as the preview shows.
func TestAdoptLongNodeGroupName(t *testing.T) {
	deployed := readDeployed(t)
	rendered := copyValues(t, deployed)
	short := helmvalues.NodeGroupName(adoptRelease, "twenty-characters-ng")
	rendered["nodeGroups"].([]any)[2].(map[string]any)["name"] = short
	a, err := helmvalues.Adopt(helmvalues.AdoptInput{Deployed: deployed, DeployedChart: "0.27.0", Rendered: rendered, RenderedChart: "0.27.0"})
	if err != nil {
		t.Fatal(err)
	}
	got := objectDiff(t, render(t, deployed), render(t, a.Values))
	var other []string
	replaced := map[string]int{}
	for _, line := range got {
		kind, rest, _ := strings.Cut(line, "/")
		switch {
		case strings.Contains(rest, "twenty-characters-n") && strings.HasSuffix(line, ": removed"),
			strings.Contains(rest, short) && strings.HasSuffix(line, ": added"):
			replaced[kind]++
		default:
			other = append(other, line)
		}
	}
	// MachineDeployment, MachineHealthCheck and both templates, old and new.
	for _, kind := range []string{"MachineDeployment", "MachineHealthCheck", "KubeadmConfigTemplate", "OpenStackMachineTemplate"} {
		if replaced[kind] != 2 {
			t.Errorf("%s: %d of the group's objects removed or added, want 2 (got %v)", kind, replaced[kind], got)
		}
	}
	if len(other) != 2 {
		t.Errorf("beyond the long-named group, want the marker and allowedCIDRs only; got %v", other)
	}
}

func setCount(v map[string]any, name string, count int) {
	for _, g := range v["nodeGroups"].([]any) {
		if g := g.(map[string]any); g["name"] == name {
			g["machineCount"] = count
		}
	}
}

func readDeployed(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "adopt", "stackhpc-1.4.0.deployed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// copyValues copies a values tree as Helm stores and returns it (JSON).
func copyValues(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func render(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testchart.Render(ch, adoptRelease, adoptNamespace, copyValues(t, values))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

// objectDiff lists, sorted, "<Kind>/<name>: <path>" for every field that
// differs between two renderings, and "<Kind>/<name>: removed|added" for
// objects only one has.
func objectDiff(t *testing.T, before, after map[string]*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for key, b := range before {
		a, ok := after[key]
		if !ok {
			out = append(out, key+": removed")
			continue
		}
		var paths []string
		fieldDiff("", b.Object, a.Object, &paths)
		for _, p := range paths {
			out = append(out, key+": "+p)
		}
	}
	for key := range after {
		if _, ok := before[key]; !ok {
			out = append(out, key+": added")
		}
	}
	sort.Strings(out)
	return out
}

func fieldDiff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			fieldDiff(path+"."+k, am[k], bm[k], out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, path)
	}
}
