package deploy

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

const (
	helmChart     = "helm/magnum-capi"
	helmNamespace = "magnum-capi-system"
)

// chartValuesFiles are the values files the chart is linted and rendered
// with: its defaults and each of ci/.
func chartValuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(helmChart, "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files in %s/ci: %v", helmChart, err)
	}
	return append([]string{""}, files...)
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	vals, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// render renders the chart as `helm install --dry-run` (client only) does,
// into its objects.
func render(t *testing.T, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.Load(helmChart)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = "magnum-capi", helmNamespace
	rel, err := install.RunWithContext(context.Background(), ch, vals)
	if err != nil {
		t.Fatalf("rendering %s: %v", helmChart, err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range releaseutil.SplitManifests(rel.Manifest) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("a rendered object does not parse: %v\n%s", err, doc)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

// TestHelmChart lints the chart and renders it with each values file, and
// has the test bed's API server dry-run every rendered object (server-side:
// schema, defaulting, validation and admission, nothing stored). The
// ServiceMonitor's kind is not installed there (it is the Prometheus
// operator's), so it is only linted and rendered.
func TestHelmChart(t *testing.T) {
	t.Parallel()
	b := theBed(t)
	ctx := context.Background()
	ns := &corev1.Namespace{}
	ns.Name = helmNamespace
	if err := b.env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, file := range chartValuesFiles(t) {
		name := "defaults"
		if file != "" {
			name = filepath.Base(file)
		}
		t.Run(name, func(t *testing.T) {
			vals := readValues(t, file)
			lint := action.NewLint()
			lint.Namespace = helmNamespace
			res := lint.Run([]string{helmChart}, vals)
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
			checked := 0
			for _, obj := range render(t, vals) {
				if obj.GetKind() == "ServiceMonitor" {
					continue
				}
				checked++
				if obj.GetNamespace() == "" && isNamespaced(t, b, obj) {
					obj.SetNamespace(helmNamespace)
				}
				if err := b.env.Client.Create(ctx, obj, client.DryRunAll); err != nil {
					t.Errorf("server-side dry run of %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			if checked == 0 {
				t.Error("the chart renders nothing to dry-run")
			}
		})
	}
}

func isNamespaced(t *testing.T, b *bed, obj *unstructured.Unstructured) bool {
	t.Helper()
	namespaced, err := b.env.Client.IsObjectNamespaced(obj)
	if err != nil {
		t.Fatalf("%s: %v", obj.GetKind(), err)
	}
	return namespaced
}

// TestHelmChartRBAC: the RBAC the chart renders is deploy/rbac's, file for
// file (the chart's files/rbac are links to them).
func TestHelmChartRBAC(t *testing.T) {
	t.Parallel()
	links, err := filepath.Glob(filepath.Join(helmChart, "files", "rbac", "*.yaml"))
	if err != nil || len(links) == 0 {
		t.Fatalf("no RBAC files in the chart: %v", err)
	}
	for _, l := range links {
		got, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("rbac", filepath.Base(l)))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s differs from deploy/rbac/%s (%v)", l, filepath.Base(l), err)
		}
	}
	objs := render(t, readValues(t, filepath.Join(helmChart, "ci", "deployment-values.yaml")))
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	for _, want := range []string{"ClusterRole/magnum-capi", "ClusterRole/magnum-capi-namespace", "ClusterRoleBinding/magnum-capi", "ServiceAccount/magnum-capi"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("with rbac.create the chart renders %v, no %s", kinds, want)
		}
	}
}

// TestHelmChartConfig: every option of docs/configuration.md can be set
// from the values' config and reaches the sidecar's configuration file as
// given.
func TestHelmChartConfig(t *testing.T) {
	t.Parallel()
	options := documentedOptions(t)
	cfg := map[string]any{}
	entry := map[string]any{}
	for _, opt := range options {
		if field, ok := strings.CutPrefix(opt, "managementClusters[]."); ok {
			entry[field] = "set-" + field
			continue
		}
		if opt == "managementClusters" {
			continue
		}
		setPath(cfg, strings.Split(opt, "."), "set-"+opt)
	}
	cfg["managementClusters"] = []any{entry}
	rendered := renderedConfig(t, render(t, map[string]any{"config": cfg}))
	for _, opt := range options {
		path := strings.Split(opt, ".")
		if field, ok := strings.CutPrefix(opt, "managementClusters[]."); ok {
			list, _ := rendered["managementClusters"].([]any)
			if len(list) != 1 || list[0].(map[string]any)[field] != "set-"+field {
				t.Errorf("option %s: the rendered configuration has managementClusters %v", opt, rendered["managementClusters"])
			}
			continue
		}
		if opt == "managementClusters" {
			continue
		}
		if got := getPath(rendered, path); got != "set-"+opt {
			t.Errorf("option %s set from values: the rendered configuration has %v", opt, got)
		}
	}
}

// documentedOptions are the options docs/configuration.md's tables list.
func documentedOptions(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z.\\[\\]]+)` \\|").FindAllStringSubmatch(string(raw), -1) {
		out = append(out, m[1])
	}
	if len(out) < 20 {
		t.Fatalf("docs/configuration.md lists only %d options: %v", len(out), out)
	}
	return out
}

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func getPath(m map[string]any, path []string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// renderedConfig is the sidecar's configuration file in the rendered
// ConfigMap, parsed.
func renderedConfig(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	cm := configMapData(t, objs, "magnum-capi-config")
	var out map[string]any
	if err := yaml.Unmarshal([]byte(cm["magnum-capi.yaml"]), &out); err != nil {
		t.Fatalf("the rendered magnum-capi.yaml: %v\n%s", err, cm["magnum-capi.yaml"])
	}
	return out
}

func configMapData(t *testing.T, objs []*unstructured.Unstructured, name string) map[string]string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == name {
			data, _, err := unstructured.NestedStringMap(o.Object, "data")
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("no ConfigMap %s rendered", name)
	return nil
}

// TestHelmChartDeploymentTLS: as its own Deployment the sidecar listens on
// TCP with mutual TLS from the Secret the pod mounts where the
// configuration names its files, and the in-cluster kubeconfig uses the
// pod's ServiceAccount.
func TestHelmChartDeploymentTLS(t *testing.T) {
	t.Parallel()
	objs := render(t, readValues(t, filepath.Join(helmChart, "ci", "deployment-values.yaml")))
	cfg := renderedConfig(t, objs)
	tls, _ := cfg["tls"].(map[string]any)
	if cfg["listen"] != "0.0.0.0:9560" || tls["certFile"] != "/etc/magnum-capi/tls/tls.crt" || tls["keyFile"] != "/etc/magnum-capi/tls/tls.key" || tls["clientCAFile"] != "/etc/magnum-capi/tls/ca.crt" {
		t.Errorf("listen %v, tls %v: want TCP on 0.0.0.0:9560 with the mounted Secret's files", cfg["listen"], tls)
	}
	var deployment *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deployment = o
		}
	}
	if deployment == nil {
		t.Fatal("no Deployment rendered")
	}
	mounts, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	container, _ := mounts[0].(map[string]any)
	var paths []string
	for _, m := range container["volumeMounts"].([]any) {
		paths = append(paths, m.(map[string]any)["mountPath"].(string))
	}
	if !slices.Contains(paths, "/etc/magnum-capi/tls") {
		t.Errorf("the container mounts %v, not the TLS Secret at /etc/magnum-capi/tls", paths)
	}
	clusters, _ := cfg["managementClusters"].([]any)
	if len(clusters) != 1 || clusters[0].(map[string]any)["kubeconfig"] != "/etc/magnum-capi/config/in-cluster-kubeconfig" {
		t.Errorf("managementClusters %v: want the in-cluster kubeconfig from the ConfigMap", clusters)
	}
	if _, ok := configMapData(t, objs, "magnum-capi-config")["in-cluster-kubeconfig"]; !ok {
		t.Error("the ConfigMap holds no in-cluster-kubeconfig")
	}
}
