package capisim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// release is one release of the openstack-cluster chart, rendered from
// testdata/release.yaml.tmpl.
type release struct {
	Name, Namespace    string
	ClusterAnnotations map[string]string
	ControlPlane       controlPlaneValues
	NodeGroups         []nodeGroupValues
	CalicoVersion      string
	CalicoOverrides    string
}

type controlPlaneValues struct {
	Replicas              int
	Version, Hash, Flavor string
}

type nodeGroupValues struct {
	Name                  string
	Replicas              int
	Autoscale             bool
	Min, Max              int
	Version, Hash, Flavor string
}

// newRelease is a release with the chart's defaults: one control-plane
// Machine and one node group of one Machine.
func newRelease(name, namespace string) release {
	return release{
		Name: name, Namespace: namespace,
		ClusterAnnotations: map[string]string{},
		ControlPlane:       controlPlaneValues{Replicas: 1, Version: "v1.29.2", Hash: "e39a716c", Flavor: "vm.small"},
		NodeGroups: []nodeGroupValues{
			{Name: "group-1", Replicas: 1, Version: "v1.29.2", Hash: "974c4cfd", Flavor: "vm.small"},
		},
		CalicoVersion:   "v3.31.5",
		CalicoOverrides: "{}",
	}
}

// render returns the release's objects, in the order Helm installs them.
func (r release) render(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "release.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("release").Funcs(template.FuncMap{
		"toJSON": func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err },
	}).Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, r); err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding the rendered release: %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(r.Namespace)
		objs = append(objs, u)
	}
	return objs
}

// install creates the release's objects, as helm install does.
func (r release) install(t testing.TB) {
	t.Helper()
	for _, o := range r.render(t) {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// upgrade applies the release's objects over what exists, as helm upgrade
// does: new objects are created, existing ones patched, and objects of
// prev that the release no longer renders are deleted unless kept.
func (r release) upgrade(t testing.TB, prev release) {
	t.Helper()
	ctx := context.Background()
	want := map[string]bool{}
	for _, o := range r.render(t) {
		want[objectKey(o)] = true
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)
		switch {
		case apierrors.IsNotFound(err):
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
			}
			continue
		case err != nil:
			t.Fatal(err)
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": o.GetLabels(), "annotations": o.GetAnnotations()}, "spec": o.Object["spec"]})
		if err != nil {
			t.Fatal(err)
		}
		if o.GetKind() == "Secret" {
			patch, _ = json.Marshal(map[string]any{"stringData": o.Object["stringData"]})
		}
		if err := env.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("patching %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range prev.render(t) {
		if want[objectKey(o)] || o.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
			continue
		}
		if err := client.IgnoreNotFound(env.Client.Delete(ctx, o)); err != nil {
			t.Fatal(err)
		}
	}
}

// uninstall deletes the release's objects except those Helm keeps.
func (r release) uninstall(t testing.TB) {
	t.Helper()
	for _, o := range r.render(t) {
		if o.GetAnnotations()["helm.sh/resource-policy"] == "keep" {
			continue
		}
		if err := client.IgnoreNotFound(env.Client.Delete(context.Background(), o)); err != nil {
			t.Fatalf("deleting %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetName()
}

// newNamespace creates a namespace named after the test.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.TrimSuffix(name, "-") + "-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// eventually polls check until it returns nil, failing the test with its
// last error after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get reads an object of a provider kind as unstructured.
func getU(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u)
	return u, err
}

// gone reports whether an object no longer exists, as an error for
// eventually.
func gone(ctx context.Context, obj client.Object) error {
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%s still exists (finalizers %v, deletionTimestamp %v)", obj.GetName(), obj.GetFinalizers(), obj.GetDeletionTimestamp())
}
