package release

import (
	"context"
	"slices"
	"strings"
	"testing"

	helmkube "helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
	"github.com/magnum-capi/magnum-capi/test/testchart"
)

func TestWaves(t *testing.T) {
	tests := []struct {
		name  string
		kinds []string
		want  [][]string
	}{
		{"nothing", nil, nil},
		{"only objects of the second wave, order kept", []string{"Secret", "Cluster", "KubeadmControlPlane", "Secret"},
			[][]string{{"Secret", "Cluster", "KubeadmControlPlane", "Secret"}}},
		{"namespace and CRD first", []string{"Secret", "Namespace", "Cluster", "CustomResourceDefinition"},
			[][]string{{"Namespace", "CustomResourceDefinition"}, {"Secret", "Cluster"}}},
		{"what a Pod is admitted against first", []string{"Deployment", "ServiceAccount", "ResourceQuota", "LimitRange", "PriorityClass"},
			[][]string{{"ServiceAccount", "ResourceQuota", "LimitRange", "PriorityClass"}, {"Deployment"}}},
		{"roles before the bindings that name them", []string{"RoleBinding", "ClusterRoleBinding", "Role", "ClusterRole"},
			[][]string{{"Role", "ClusterRole"}, {"RoleBinding", "ClusterRoleBinding"}}},
		{"only the first wave", []string{"Namespace"}, [][]string{{"Namespace"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list helmkube.ResourceList
			for _, k := range tt.kinds {
				u := &unstructured.Unstructured{}
				u.SetKind(k)
				list = append(list, &resource.Info{Object: u})
			}
			var got [][]string
			for _, w := range waves(list) {
				var kinds []string
				for _, info := range w {
					kinds = append(kinds, info.Object.GetObjectKind().GroupVersionKind().Kind)
				}
				got = append(got, kinds)
			}
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("waves %v, want %v", got, tt.want)
			}
		})
	}
}

// testConcurrentUpgrade: an upgrade that changes one node group, removes
// another and adds a third, written concurrently, leaves exactly the new
// release's node groups; one that the API server refuses for one object
// fails naming it and deletes nothing, as Helm's own writes do.
func testConcurrentUpgrade(t *testing.T, env *testbed.Env, kc *kube.Cluster, values map[string]any) {
	ctx := t.Context()
	const ns, name = "release-concurrent", "demo"
	if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{HistoryMax: 3}, quiet())
	target := Target{Getter: kc.HelmGetter(ns), Namespace: ns}
	groups := func(counts map[string]any) map[string]any {
		v := withWorkers(values, 1)
		var list []any
		for _, g := range []string{"group-1", "group-2", "group-3"} {
			if c, ok := counts[g]; ok {
				list = append(list, map[string]any{"name": g, "machineFlavor": "vm.small", "machineCount": c})
			}
		}
		v["nodeGroups"] = list
		return v
	}
	deploy(t, m, target, name, groups(map[string]any{"group-1": 1, "group-2": 1}), 1)
	deploy(t, m, target, name, groups(map[string]any{"group-1": 3, "group-3": 2}), 2)
	wantGroups(ctx, t, env, ns, map[string]int32{name + "-group-1": 3, name + "-group-3": 2})

	ch, err := testchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	// A replica count that is not a number: the API server refuses the
	// patch of group-3's MachineDeployment; group-1 must not be deleted.
	_, err = m.Deploy(ctx, target, name, ch, groups(map[string]any{"group-3": "many"}))
	if err == nil || !strings.Contains(err.Error(), "cannot patch \""+name+"-group-3\"") {
		t.Fatalf("upgrade with a refused object: %v, want the refused patch of %s-group-3", err, name)
	}
	wantGroups(ctx, t, env, ns, map[string]int32{name + "-group-1": 3, name + "-group-3": 2})
	if err := m.Uninstall(ctx, target, name); err != nil {
		t.Fatal(err)
	}
}

// wantGroups checks the namespace has exactly these MachineDeployments
// with these replica counts.
func wantGroups(ctx context.Context, t *testing.T, env *testbed.Env, ns string, want map[string]int32) {
	t.Helper()
	var mds clusterv1.MachineDeploymentList
	if err := env.Client.List(ctx, &mds, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got := map[string]int32{}
	for _, md := range mds.Items {
		if md.DeletionTimestamp == nil && md.Spec.Replicas != nil {
			got[md.Name] = *md.Spec.Replicas
		}
	}
	if len(got) != len(want) {
		t.Errorf("MachineDeployments %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("MachineDeployments %v, want %v", got, want)
			break
		}
	}
}

func TestMergePatch(t *testing.T) {
	obj := func(labels map[string]string, replicas any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
			"metadata": map[string]any{"name": "demo-group-1"},
			"spec":     map[string]any{"replicas": replicas},
		}}
		if labels != nil {
			u.SetLabels(labels)
		}
		return u
	}
	helm := map[string]string{"app.kubernetes.io/managed-by": "Helm", "app": "demo"}
	tests := []struct {
		name               string
		base, target, live *unstructured.Unstructured
		want               string
	}{
		{"Helm's ownership labels the object already has: nothing to patch",
			obj(map[string]string{"app": "demo"}, int64(2)), obj(helm, int64(2)), obj(helm, int64(2)), `{}`},
		{"a new count, and only it",
			obj(map[string]string{"app": "demo"}, int64(2)), obj(helm, int64(3)), obj(helm, int64(2)), `{"spec":{"replicas":3}}`},
		{"ownership labels the object lacks are written",
			obj(map[string]string{"app": "demo"}, int64(2)), obj(helm, int64(2)), obj(map[string]string{"app": "demo"}, int64(2)),
			`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"}}}`},
		{"a label changed by hand and not by the chart is left, as Helm's two-way patch does",
			obj(helm, int64(2)), obj(helm, int64(2)), obj(map[string]string{"app.kubernetes.io/managed-by": "Helm", "app": "other"}, int64(2)),
			`{}`},
		{"a label the chart changes is written over one changed by hand",
			obj(helm, int64(2)), obj(map[string]string{"app.kubernetes.io/managed-by": "Helm", "app": "new"}, int64(2)),
			obj(map[string]string{"app.kubernetes.io/managed-by": "Helm", "app": "other"}, int64(2)),
			`{"metadata":{"labels":{"app":"new"}}}`},
		{"a label the chart no longer renders is removed",
			obj(map[string]string{"app": "demo", "old": "x"}, int64(2)), obj(helm, int64(2)), obj(map[string]string{"app": "demo", "old": "x", "app.kubernetes.io/managed-by": "Helm"}, int64(2)),
			`{"metadata":{"labels":{"old":null}}}`},
		{"a field changed by hand and not by the chart is left, as Helm's two-way patch does",
			obj(helm, int64(2)), obj(helm, int64(2)), obj(helm, int64(5)), `{}`},
		{"no labels anywhere before",
			obj(nil, int64(2)), obj(helm, int64(2)), obj(helm, int64(2)), `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.base.DeepCopy()
			got, err := mergePatch(tt.base, tt.target, tt.live)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("patch %s, want %s", got, tt.want)
			}
			if !equality.Semantic.DeepEqual(before, tt.base) {
				t.Errorf("mergePatch changed the previous revision's object: %v", tt.base)
			}
		})
	}
}

// TestThreeWayPatch: a typed object's patch is Helm's three-way strategic
// merge from the previous revision to the target against the one live read:
// the chart's changes are made, a field the chart sets and someone changed
// by hand is set back, and what only the live object has is left.
func TestThreeWayPatch(t *testing.T) {
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "demo-config", Namespace: "ns"}, Data: data}
	}
	tests := []struct {
		name               string
		base, target, live map[string]string
		want               string
	}{
		{"nothing changed: nothing to patch",
			map[string]string{"a": "1"}, map[string]string{"a": "1"}, map[string]string{"a": "1"}, `{}`},
		{"the chart's change",
			map[string]string{"a": "1"}, map[string]string{"a": "2"}, map[string]string{"a": "1"}, `{"data":{"a":"2"}}`},
		{"a chart field changed by hand is set back",
			map[string]string{"a": "1"}, map[string]string{"a": "1"}, map[string]string{"a": "hand"}, `{"data":{"a":"1"}}`},
		{"a key only the live object has is left",
			map[string]string{"a": "1"}, map[string]string{"a": "1"}, map[string]string{"a": "1", "extra": "x"}, `{}`},
		{"a key the chart no longer renders is removed",
			map[string]string{"a": "1", "old": "x"}, map[string]string{"a": "1"}, map[string]string{"a": "1", "old": "x"}, `{"data":{"old":null}}`},
	}
	mapping := &meta.RESTMapping{GroupVersionKind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Scope: meta.RESTScopeNamespace}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := &resource.Info{Name: "demo-config", Namespace: "ns", Object: cm(tt.target), Mapping: mapping}
			if isUnstructured(target) || !ownUpdate(target) {
				t.Fatal("a ConfigMap is a typed object updateObject updates")
			}
			got, err := threeWayPatch(cm(tt.base), target, cm(tt.live))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("patch %s, want %s", got, tt.want)
			}
		})
	}
}
