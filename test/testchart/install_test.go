package testchart

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

func startTestbed(t *testing.T) *testbed.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	env, err := testbed.Start(ctx, testbed.Options{})
	if err != nil {
		t.Fatalf("starting the test bed: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the test bed: %v", err)
		}
	})
	return env
}

func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "testchart-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// TestInstallAndUpgradeInTestbed installs the chart with the Helm SDK into a
// real kube-apiserver with the CAPI, CAPO and addon-provider CRDs and CAPI's
// conversion webhook, then upgrades it with a new worker flavor and Kubernetes
// version, as the driver does for a resize or an upgrade.
func TestInstallAndUpgradeInTestbed(t *testing.T) {
	// Every v1beta1 CAPI write draws a deprecation warning; they are expected.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	env := startTestbed(t)
	ctx := t.Context()
	ns := newNamespace(t, env.Client)
	const release = "demo"
	values := loadValues(t, "values-base.yaml")

	// Strict server-side validation first: an unknown or misplaced field is
	// an error here, where a normal create would silently drop it.
	objs, err := renderFresh(t, release, values)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		obj = obj.DeepCopy()
		obj.SetNamespace(ns)
		if err := env.Client.Create(ctx, obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			t.Errorf("%s %s is not valid for the API server: %v", obj.GetKind(), obj.GetName(), err)
		}
	}

	_, cfg, err := NewHelm(env.KubeconfigPath, ns, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName = release
	install.Namespace = ns
	rel, err := install.RunWithContext(ctx, ch, values)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	installed := checkStored(t, env.Client, ns, rel.Manifest)

	mdName := release + "-group-1"
	oldWorkerTemplate := machineTemplateOf(t, installed, mdName)
	oldCPTemplate := controlPlaneTemplateOf(t, installed)
	var md clusterv1.MachineDeployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mdName}, &md); err != nil {
		t.Fatal(err)
	}
	if got := md.Spec.Template.Spec.InfrastructureRef.Name; got != oldWorkerTemplate {
		t.Errorf("stored MachineDeployment (v1beta2) points at %q, want %q", got, oldWorkerTemplate)
	}

	// The upgrade: a bigger worker flavor and a newer Kubernetes (whose image
	// name the base values derive from the version).
	upgraded := mergeValues(values, parseValues(t, `
kubernetesVersion: 1.30.1
nodeGroups:
  - name: group-1
    machineFlavor: vm.large
    machineCount: 1
`))
	ch, err = Load()
	if err != nil {
		t.Fatal(err)
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	rel, err = upgrade.RunWithContext(ctx, release, ch, upgraded)
	if err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	after := checkStored(t, env.Client, ns, rel.Manifest)
	newWorkerTemplate := machineTemplateOf(t, after, mdName)
	newCPTemplate := controlPlaneTemplateOf(t, after)
	if newWorkerTemplate == oldWorkerTemplate || newCPTemplate == oldCPTemplate {
		t.Fatalf("machine templates kept their names (%s, %s) although flavor and image changed", newWorkerTemplate, newCPTemplate)
	}

	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mdName}, &md); err != nil {
		t.Fatal(err)
	}
	if got := md.Spec.Template.Spec.InfrastructureRef.Name; got != newWorkerTemplate {
		t.Errorf("after the upgrade the MachineDeployment points at %q, want the new template %q", got, newWorkerTemplate)
	}
	if got := md.Spec.Template.Spec.Version; got != "v1.30.1" {
		t.Errorf("after the upgrade the MachineDeployment's version is %q, want v1.30.1", got)
	}
	var kcp controlplanev1.KubeadmControlPlane
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-control-plane"}, &kcp); err != nil {
		t.Fatal(err)
	}
	if got := kcp.Spec.Version; got != "v1.30.1" {
		t.Errorf("after the upgrade the control plane's version is %q, want v1.30.1", got)
	}
	if got := kcp.Spec.MachineTemplate.Spec.InfrastructureRef.Name; got != newCPTemplate {
		t.Errorf("after the upgrade the control plane points at %q, want %q", got, newCPTemplate)
	}
	// Cluster API still needs the old templates until the rollout is over;
	// Helm's "keep" policy must leave them behind.
	for _, name := range []string{oldWorkerTemplate, oldCPTemplate, newWorkerTemplate, newCPTemplate} {
		osmt := &unstructured.Unstructured{}
		osmt.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		osmt.SetKind("OpenStackMachineTemplate")
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, osmt); err != nil {
			t.Errorf("OpenStackMachineTemplate %s: %v", name, err)
		}
	}
}

func machineTemplateOf(t *testing.T, objs []*unstructured.Unstructured, md string) string {
	t.Helper()
	obj := find(objs, "MachineDeployment", md)
	if obj == nil {
		t.Fatalf("no MachineDeployment %s in the release", md)
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "infrastructureRef", "name")
	return name
}

func controlPlaneTemplateOf(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	obj := find(objs, "KubeadmControlPlane", "demo-control-plane")
	if obj == nil {
		t.Fatal("no KubeadmControlPlane in the release")
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "machineTemplate", "infrastructureRef", "name")
	return name
}

// checkStored reads every object of a release manifest back from the API
// server, at the version the chart wrote it (so CAPI objects go through the
// conversion webhook twice), and checks that every rendered field came back
// unchanged. It returns the rendered objects.
func checkStored(t *testing.T, c client.Client, ns, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := ParseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("the release has no objects")
	}
	for _, rendered := range objs {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(rendered.GroupVersionKind())
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: rendered.GetName()}, stored); err != nil {
			t.Errorf("%s %s: %v", rendered.GetKind(), rendered.GetName(), err)
			continue
		}
		want := rendered.DeepCopy().Object
		if rendered.GetKind() == "Secret" {
			stringDataAsData(want)
		}
		if lost := missingFrom(stored.Object, want, ""); len(lost) > 0 {
			t.Errorf("%s %s lost or changed rendered fields in the API server:\n%s", rendered.GetKind(), rendered.GetName(), strings.Join(lost, "\n"))
		}
	}
	return objs
}

// stringDataAsData turns a Secret's stringData into the data the API server
// stores for it.
func stringDataAsData(secret map[string]any) {
	stringData, _ := secret["stringData"].(map[string]any)
	if len(stringData) == 0 {
		return
	}
	data, _ := secret["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range stringData {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	secret["data"] = data
	delete(secret, "stringData")
}

// missingFrom lists the fields of want that stored lacks or holds with
// another value. Numbers compare by value (YAML gives float64, the API
// int64); a null in want (the chart's "annotations:" with nothing under it)
// asks for nothing.
func missingFrom(stored, want any, path string) []string {
	switch w := want.(type) {
	case nil:
		return nil
	case map[string]any:
		s, ok := stored.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: stored %v, want a map", path, stored)}
		}
		var lost []string
		for k, v := range w {
			lost = append(lost, missingFrom(s[k], v, path+"."+k)...)
		}
		return lost
	case []any:
		s, ok := stored.([]any)
		if !ok || len(s) != len(w) {
			return []string{fmt.Sprintf("%s: stored %v, want %v", path, stored, want)}
		}
		var lost []string
		for i := range w {
			lost = append(lost, missingFrom(s[i], w[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return lost
	case float64:
		if n, ok := number(stored); ok && n == w {
			return nil
		}
	case string:
		if s, ok := stored.(string); ok && (s == w || sameDuration(s, w) || sameRefGroup(path, s, w)) {
			return nil
		}
	default:
		if stored == want {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: stored %s, want %s", path, show(stored), show(want))}
}

// sameDuration: CAPI v1beta2 keeps durations as seconds, so "20m" written as
// v1beta1 reads back as "20m0s".
func sameDuration(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}

// sameRefGroup: CAPI v1beta2 references name an API group, not a version, so
// a reference written as v1beta1 reads back with the version CAPI's conversion
// picks for the referenced kind (v1beta2 for CAPI's own kinds).
func sameRefGroup(path, a, b string) bool {
	if !strings.HasSuffix(path, "Ref.apiVersion") {
		return false
	}
	groupA, _, _ := strings.Cut(a, "/")
	groupB, _, _ := strings.Cut(b, "/")
	return groupA == groupB
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int64:
		return float64(n), true
	}
	return 0, false
}
