package testchart

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// The real chart's own test inputs and helm-unittest snapshots of what it
// renders for them (test/testdata/chart-0.27.0/PROVENANCE.md).
func referenceDir() string { return filepath.Join(testbed.TestdataDir(), "chart-0.27.0") }

// Snapshot names the objects as helm-unittest renders them.
const (
	snapshotRelease   = "RELEASE-NAME"
	snapshotNamespace = "NAMESPACE"
	// The snapshots come from the chart's source tree, where both charts are
	// at version 0.1.0 (the release version is stamped when publishing); it
	// shows in the helm.sh/chart labels and the etcd-defrag chart version.
	snapshotChartVersion = "0.1.0"
)

type objectKey struct{ APIVersion, Kind, Name string }

func (k objectKey) String() string { return k.Kind + " " + k.Name + " (" + k.APIVersion + ")" }

func keyOf(o *unstructured.Unstructured) objectKey {
	return objectKey{o.GetAPIVersion(), o.GetKind(), o.GetName()}
}

// loadSnapshot reads a helm-unittest snapshot file: one test case mapping
// document numbers to rendered YAML. Documents without a kind (NOTES.txt) are
// left out.
func loadSnapshot(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(referenceDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]map[string]string
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	if len(cases) != 1 {
		t.Fatalf("%s: want one test case, got %d", name, len(cases))
	}
	var objs []*unstructured.Unstructured
	for _, docs := range cases {
		numbers := make([]int, 0, len(docs))
		for k := range docs {
			n, err := strconv.Atoi(k)
			if err != nil {
				t.Fatalf("%s: document key %q is not a number", name, k)
			}
			numbers = append(numbers, n)
		}
		sort.Ints(numbers)
		for _, n := range numbers {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(docs[strconv.Itoa(n)]), &obj.Object); err != nil {
				t.Fatalf("%s document %d: %v", name, n, err)
			}
			if obj.GetKind() == "" {
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

// loadValues merges values files the way `helm -f a -f b` does.
func loadValues(t *testing.T, names ...string) map[string]any {
	t.Helper()
	merged := map[string]any{}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(referenceDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		var values map[string]any
		if err := yaml.Unmarshal(data, &values); err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		merged = mergeValues(merged, values)
	}
	return merged
}

func mergeValues(base, override map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range override {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(bm, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// loadAtSnapshotVersion loads the test chart as the snapshots saw the real one.
func loadAtSnapshotVersion(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ch.Metadata.Version = snapshotChartVersion
	for _, dep := range ch.Dependencies() {
		dep.Metadata.Version = snapshotChartVersion
	}
	return ch
}

// notInTestChart lists objects of the real chart's "full" snapshot that the
// test chart does not render: each belongs to an addon the Magnum driver never
// turns on, so nothing of ours can depend on it. Names are without the
// "<release>-" prefix.
var notInTestChart = map[objectKey]string{
	// Ingress is always off for Magnum clusters (no way yet to clean up the
	// load balancer an ingress controller creates).
	{"v1", "Secret", "traefik-config"}:                                  "ingress",
	{"addons.stackhpc.com/v1alpha1", "HelmRelease", "traefik"}:          "ingress",
	{"addons.stackhpc.com/v1alpha1", "Manifests", "traefik-dashboards"}: "ingress",
	{"addons.stackhpc.com/v1alpha1", "Manifests", "traefik-alerts"}:     "ingress",
	// The Intel device operators, and the Flux objects Intel XPU monitoring
	// needs.
	{"v1", "Secret", "intel-device-plugin-gpu-config"}:                              "intel",
	{"addons.stackhpc.com/v1alpha1", "HelmRelease", "intel-device-plugin-gpu"}:      "intel",
	{"v1", "Secret", "intel-device-plugin-operator-config"}:                         "intel",
	{"addons.stackhpc.com/v1alpha1", "HelmRelease", "intel-device-plugin-operator"}: "intel",
	{"addons.stackhpc.com/v1alpha1", "Manifests", "intel-xpumanager-services"}:      "intel",
	{"addons.stackhpc.com/v1alpha1", "Manifests", "intel-xpu-dashboard"}:            "intel",
	{"source.toolkit.fluxcd.io/v1", "GitRepository", "intel-xpu-monitoring-repo"}:   "intel",
	{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "intel-xpu-monitoring"}:     "intel",
	// Headlamp came to the chart after 0.27.0 (the snapshot is from just after).
	{"v1", "Secret", "headlamp-config"}:                         "headlamp",
	{"addons.stackhpc.com/v1alpha1", "HelmRelease", "headlamp"}: "headlamp",
}

// dashboardSources are manifest sources holding a ConfigMap of Grafana
// dashboards. The real chart embeds upstream dashboard JSON (about 400 KB in
// all); the test chart writes an empty dashboard per file instead. For these
// only the ConfigMap's metadata and file names are compared. Names are without
// the "<release>-" prefix.
var dashboardSources = map[objectKey][]int{
	{"addons.stackhpc.com/v1alpha1", "Manifests", "cni-calico-monitoring"}:            {3},
	{"addons.stackhpc.com/v1alpha1", "Manifests", "kube-prometheus-stack-dashboards"}: {0},
	{"addons.stackhpc.com/v1alpha1", "Manifests", "loki-stack-dashboards"}:            {1},
	{"addons.stackhpc.com/v1alpha1", "Manifests", "blackbox-exporter-dashboards"}:     {0},
	{"addons.stackhpc.com/v1alpha1", "Manifests", "amd-gpu-dashboards"}:               {0},
}

// TestRenderMatchesRealChart renders the test chart for the real chart's own
// test inputs and compares every object with the real chart's output: the same
// objects (apiVersion, kind, name), and each one equal field for field, so
// labels, annotations, references, template checksums and every spec field
// match.
func TestRenderMatchesRealChart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		values   []string
		snapshot string
	}{
		{"base", []string{"values-base.yaml"}, "rendered-base.yaml.snap"},
		{"ovn load balancer", []string{"values-base.yaml", "values-ovn.yaml"}, "rendered-ovn.yaml.snap"},
		{"every addon", []string{"values-base.yaml", "values-full.yaml"}, "rendered-full.yaml.snap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := loadSnapshot(t, tc.snapshot)
			ch := loadAtSnapshotVersion(t)
			got, err := Render(ch, snapshotRelease, snapshotNamespace, loadValues(t, tc.values...))
			if err != nil {
				t.Fatal(err)
			}
			compareObjects(t, snapshotRelease, want, got)
		})
	}
}

// compareObjects checks got holds the objects of want, field for field,
// except those notInTestChart lists and the dashboards of dashboardSources.
func compareObjects(t *testing.T, release string, want, got []*unstructured.Unstructured) {
	t.Helper()
	gotByKey := map[objectKey][]*unstructured.Unstructured{}
	for _, o := range got {
		gotByKey[keyOf(o)] = append(gotByKey[keyOf(o)], o)
	}
	compared := 0
	for _, w := range want {
		key := keyOf(w)
		matches := gotByKey[key]
		if _, skipped := notInTestChart[withoutRelease(key, release)]; skipped {
			if len(matches) > 0 {
				t.Errorf("%s is rendered but listed in notInTestChart; compare it instead", key)
			}
			continue
		}
		if len(matches) == 0 {
			t.Errorf("missing %s", key)
			continue
		}
		g := matches[0]
		gotByKey[key] = matches[1:]
		compared++
		wantObj := withoutLeadingNewline(normalizeSnapshot(w.DeepCopy().Object)).(map[string]any)
		gotObj := withoutLeadingNewline(g.DeepCopy().Object).(map[string]any)
		if err := compareDashboards(withoutRelease(key, release), wantObj, gotObj); err != nil {
			t.Errorf("%s: %v", key, err)
		}
		if diff := treeDiff(wantObj, gotObj); diff != "" {
			t.Errorf("%s differs from the real chart (want = real chart):\n%s", key, diff)
		}
	}
	for key, extra := range gotByKey {
		for _, g := range extra {
			t.Errorf("unexpected %s (not rendered by the real chart)%s", key, sameTemplate(want, g))
		}
	}
	if compared == 0 {
		t.Fatal("no objects compared")
	}
	t.Logf("%d objects equal to the real chart's", compared)
}

func withoutRelease(key objectKey, release string) objectKey {
	key.Name = strings.TrimPrefix(key.Name, release+"-")
	return key
}

// trailingBlankLine is a space-only last line of a string.
var trailingBlankLine = regexp.MustCompile(`\n +\n$`)

// normalizeSnapshot undoes an artifact of helm-unittest, which wrote the
// snapshots: it keeps the space-only line that ends a template file when the
// file's last object ends in a block scalar, which Helm itself trims before
// sending the object (releaseutil.SplitManifests). So "...\n    \n" in a
// snapshot string is "...\n" in a real install, and the test chart renders
// the latter.
func normalizeSnapshot(v any) any {
	return mapStrings(v, func(s string) string { return trailingBlankLine.ReplaceAllString(s, "\n") })
}

// withoutLeadingNewline undoes another helm-unittest artifact, on both sides:
// its YAML parser drops the empty first line of a block scalar written with an
// indentation indicator ("|2"), which Helm's and the API server's parser keep.
// The real chart's containerd hosts.toml files start with such a line (so the
// test chart's do too, or the template checksums would differ) and their
// snapshot shows none.
func withoutLeadingNewline(v any) any {
	return mapStrings(v, func(s string) string { return strings.TrimPrefix(s, "\n") })
}

func mapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = mapStrings(e, f)
		}
	case []any:
		for i, e := range v {
			v[i] = mapStrings(e, f)
		}
	case string:
		return f(v)
	}
	return v
}

// sameTemplate explains an unexpected machine or bootstrap template: if the
// real chart has one of the same kind and base name (differing only in the
// checksum suffix), the spec difference is why the checksum differs.
func sameTemplate(want []*unstructured.Unstructured, got *unstructured.Unstructured) string {
	base := templateBase(got.GetName())
	for _, w := range want {
		if w.GetKind() == got.GetKind() && templateBase(w.GetName()) == base && base != w.GetName() {
			return fmt.Sprintf("; the real chart's %s differs:\n%s", w.GetName(),
				treeDiff(withoutLeadingNewline(normalizeSnapshot(w.DeepCopy().Object["spec"])),
					withoutLeadingNewline(got.DeepCopy().Object["spec"])))
		}
	}
	return ""
}

func templateBase(name string) string {
	if i := strings.LastIndex(name, "-"); i > 0 && len(name)-i-1 == 8 {
		return name[:i]
	}
	return name
}

// compareDashboards checks the dashboard sources of key by ConfigMap metadata
// and file names, then removes them from both objects.
func compareDashboards(key objectKey, want, got map[string]any) error {
	indexes := dashboardSources[key]
	if len(indexes) == 0 {
		return nil
	}
	wantSources, _, _ := unstructured.NestedSlice(want, "spec", "manifestSources")
	gotSources, _, _ := unstructured.NestedSlice(got, "spec", "manifestSources")
	if len(wantSources) != len(gotSources) {
		return fmt.Errorf("%d manifest sources, real chart has %d", len(gotSources), len(wantSources))
	}
	for _, i := range indexes {
		wantCM, err := dashboardConfigMap(wantSources[i])
		if err != nil {
			return fmt.Errorf("real chart source %d: %w", i, err)
		}
		gotCM, err := dashboardConfigMap(gotSources[i])
		if err != nil {
			return fmt.Errorf("source %d: %w", i, err)
		}
		if diff := treeDiff(wantCM, gotCM); diff != "" {
			return fmt.Errorf("dashboards of source %d differ :\n%s", i, diff)
		}
		wantSources[i], gotSources[i] = "dashboards", "dashboards"
	}
	_ = unstructured.SetNestedSlice(want, wantSources, "spec", "manifestSources")
	_ = unstructured.SetNestedSlice(got, gotSources, "spec", "manifestSources")
	return nil
}

// dashboardConfigMap reduces a dashboards manifest template to what is
// compared: the ConfigMap's metadata and its file names.
func dashboardConfigMap(source any) (map[string]any, error) {
	template, _ := source.(map[string]any)["template"].(string)
	var cm map[string]any
	if err := yaml.Unmarshal([]byte(template), &cm); err != nil {
		return nil, err
	}
	data, _ := cm["data"].(map[string]any)
	files := make([]string, 0, len(data))
	for f := range data {
		files = append(files, f)
	}
	sort.Strings(files)
	return map[string]any{"metadata": cm["metadata"], "files": strings.Join(files, ",")}, nil
}
