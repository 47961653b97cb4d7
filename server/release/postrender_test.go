package release

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/postrender/*.golden.yaml")

// TestDecoratorGolden post-renders a chart rendering with the driver's
// labels and a node group's capacity annotations: every object gets the
// labels; only the gpu group's MachineDeployment gets the annotations (beside
// the chart's bounds), the fixed-size group none (it has no entry), and the
// machine template with the same node-group label none (another kind).
func TestDecoratorGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "postrender", "rendered.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := decorator{
		labels: map[string]string{"magnum.openstack.org/cluster-uuid": "c0ffee", "magnum.openstack.org/project-id": "p1"},
		machineAnnotations: map[string]map[string]string{
			"gpu":     {"capacity.cluster-autoscaler.kubernetes.io/cpu": "8", "capacity.cluster-autoscaler.kubernetes.io/memory": "32768Mi", "capacity.cluster-autoscaler.kubernetes.io/gpu-count": "1"},
			"retired": {"capacity.cluster-autoscaler.kubernetes.io/cpu": "2"}, // no such group rendered: nothing happens
		},
	}
	out, err := d.Run(bytes.NewBuffer(in))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "postrender", "decorated.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("post-rendered output differs from %s (go test ./server/release -run TestDecoratorGolden -update rewrites it):\n%s", golden, out)
	}
}

// TestDecoratorRefusesBrokenYAML: a rendering that is not YAML is an error,
// never a silently shortened manifest.
func TestDecoratorRefusesBrokenYAML(t *testing.T) {
	if _, err := (decorator{labels: map[string]string{"a": "b"}}).Run(bytes.NewBufferString("kind: [unclosed\n")); err == nil {
		t.Fatal("want an error for a broken rendering")
	}
}

func TestPostRendererOnlyWhenNeeded(t *testing.T) {
	if (Target{}).postRenderer() != nil {
		t.Error("a target without labels or annotations has a post-renderer")
	}
	if (Target{MachineAnnotations: map[string]map[string]string{"gpu": {"k": "v"}}}).postRenderer() == nil {
		t.Error("a target with machine annotations has no post-renderer")
	}
}
