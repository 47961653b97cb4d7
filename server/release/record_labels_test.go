package release

import (
	"context"
	"reflect"
	"testing"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/server/kube"
	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// testRecordLabels: record labels go on the release record alone, stay
// there through an upgrade that does not send them, and come back with
// Get; ObjectSpec reads the post-rendered OpenStackCluster.
func testRecordLabels(t *testing.T, env *testbed.Env, kc *kube.Cluster, values map[string]any) {
	ctx := t.Context()
	const ns, name, key = "release-test-record", "demo", "magnum.openstack.org/certificates-expiry-days-default"
	if err := kc.EnsureNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{HistoryMax: 3}, quiet())
	labels := map[string]string{"magnum.openstack.org/cluster-uuid": "c0ffee"}
	patch := SpecPatch{Group: "infrastructure.cluster.x-k8s.io", Kind: "OpenStackCluster",
		Spec: map[string]any{"apiServerLoadBalancer": map[string]any{"flavor": "amphora-ha"}}}
	install := Target{Getter: kc.HelmGetter(ns), Namespace: ns, Labels: labels,
		RecordLabels: map[string]string{key: "21"}, SpecPatches: []SpecPatch{patch}}
	deploy(t, m, install, name, values, 1)
	upgrade := install
	upgrade.RecordLabels = nil
	deploy(t, m, upgrade, name, values, 2)

	rel, err := m.Get(context.Background(), upgrade, name)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Labels[key] != "21" || rel.Labels["magnum.openstack.org/cluster-uuid"] != "c0ffee" {
		t.Errorf("release labels %v: want the record label kept beside the cluster's", rel.Labels)
	}
	spec, err := rel.ObjectSpec("infrastructure.cluster.x-k8s.io", "OpenStackCluster")
	if err != nil {
		t.Fatal(err)
	}
	if lb, _ := spec["apiServerLoadBalancer"].(map[string]any); lb["flavor"] != "amphora-ha" {
		t.Errorf("OpenStackCluster spec %v: want the post-rendered load balancer flavor", spec)
	}
	var cluster clusterv1.Cluster
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cluster); err != nil {
		t.Fatal(err)
	}
	if _, ok := cluster.Labels[key]; ok || cluster.Labels["magnum.openstack.org/cluster-uuid"] != "c0ffee" {
		t.Errorf("CAPI Cluster labels %v: want the cluster's and no record label", cluster.Labels)
	}
	if err := m.Uninstall(ctx, upgrade, name); err != nil {
		t.Fatal(err)
	}
}

func TestObjectSpec(t *testing.T) {
	manifest := "---\n# Source: openstack-cluster/templates/cluster.yaml\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n" +
		"metadata: {name: demo}\nspec: {paused: false}\n" +
		"---\n# Source: openstack-cluster/templates/template.yaml\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: OpenStackClusterTemplate\n" +
		"metadata: {name: demo}\nspec: {template: {}}\n" +
		"---\n# Source: openstack-cluster/templates/infra.yaml\napiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: OpenStackCluster\n" +
		"metadata: {name: demo}\nspec:\n  apiServerLoadBalancer: {enabled: true, flavor: amphora}\n"
	tests := []struct {
		name, manifest, group, kind string
		want                        any
	}{
		{"the kind, not one whose name starts with it", manifest, "infrastructure.cluster.x-k8s.io", "OpenStackCluster",
			map[string]any{"enabled": true, "flavor": "amphora"}},
		{"another group's kind of that name", manifest, "example.com", "OpenStackCluster", nil},
		{"no manifest", "", "infrastructure.cluster.x-k8s.io", "OpenStackCluster", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := (&Release{manifest: tt.manifest}).ObjectSpec(tt.group, tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			got := any(nil)
			if spec != nil {
				got = spec["apiServerLoadBalancer"]
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("apiServerLoadBalancer = %v, want %v", got, tt.want)
			}
		})
	}
}
