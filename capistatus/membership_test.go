package capistatus

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// memberObject is the YAML of one object: kind and apiVersion, name,
// labels and spec.clusterName.
func memberObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	objs := objects(t, doc)
	if len(objs) != 1 {
		t.Fatalf("fixture holds %d objects, want 1", len(objs))
	}
	return objs[0]
}

// TestClusterOf: which cluster each kind status is derived from belongs to,
// at every version it is read at. The CAPI kinds' rows are read at v1beta2
// and at v1beta1 (the name, labels and spec.clusterName read are the same in
// both).
func TestClusterOf(t *testing.T) {
	const chart, capi, addon = "capi.stackhpc.com/cluster", "cluster.x-k8s.io/cluster-name", "addons.stackhpc.com/cluster"
	cases := []struct {
		name, doc, want string
	}{
		{"Cluster by the chart's label", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: x, labels: {` + chart + `: demo}}}`, "demo"},
		{"Cluster by its name", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: demo}}`, "demo"},
		{"KubeadmControlPlane by the chart's label", `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: cp, labels: {` + chart + `: demo, ` + capi + `: other}}}`, "demo"},
		{"KubeadmControlPlane by the chart's name", `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: demo-control-plane}}`, "demo"},
		{"KubeadmControlPlane of another name", `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: cp-by-ref, labels: {` + capi + `: demo}}}`, ""},
		{"MachineDeployment by the chart's label", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: md, labels: {` + chart + `: demo}}, spec: {clusterName: other}}`, "demo"},
		{"MachineDeployment by spec.clusterName", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineDeployment, metadata: {name: md, labels: {` + capi + `: other}}, spec: {clusterName: demo}}`, "demo"},
		{"Machine by CAPI's label", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: m, labels: {` + capi + `: demo}}}`, "demo"},
		{"Machine of none", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: demo-m, labels: {` + addon + `: demo}}}`, ""},
		{"OpenStackCluster by the chart's label", `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackCluster, metadata: {name: x, labels: {` + chart + `: demo}}}`, "demo"},
		{"OpenStackCluster by its name", `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackCluster, metadata: {name: demo, labels: {` + capi + `: other}}}`, "demo"},
		{"OpenStackServer by CAPI's label", `{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: OpenStackServer, metadata: {name: demo-m, labels: {` + capi + `: demo, ` + chart + `: other}}}`, "demo"},
		{"OpenStackServer without CAPI's label", `{apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1, kind: OpenStackServer, metadata: {name: demo, labels: {` + chart + `: demo}}}`, ""},
		{"HelmRelease by the chart's label", `{apiVersion: addons.stackhpc.com/v1alpha1, kind: HelmRelease, metadata: {name: a, labels: {` + chart + `: demo}}, spec: {clusterName: other}}`, "demo"},
		{"HelmRelease by spec.clusterName", `{apiVersion: addons.stackhpc.com/v1alpha1, kind: HelmRelease, metadata: {name: a, labels: {` + addon + `: other}}, spec: {clusterName: demo}}`, "demo"},
		{"Manifests by the addon provider's label", `{apiVersion: addons.stackhpc.com/v1alpha1, kind: Manifests, metadata: {name: a, labels: {` + addon + `: demo}}}`, "demo"},
		{"Helm's release record", `{apiVersion: v1, kind: Secret, metadata: {name: sh.helm.release.v1.demo.v1, labels: {owner: helm, name: demo}}}`, "demo"},
		{"another Secret", `{apiVersion: v1, kind: Secret, metadata: {name: demo-ca, labels: {` + chart + `: demo, name: demo}}}`, ""},
		{"a kind status is not derived from", `{apiVersion: cluster.x-k8s.io/v1beta2, kind: MachineSet, metadata: {name: demo-ms, labels: {` + chart + `: demo}}, spec: {clusterName: demo}}`, ""},
		{"CAPO's machines", `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackMachine, metadata: {name: demo-m, labels: {` + chart + `: demo, ` + capi + `: demo}}}`, ""},
	}
	for _, c := range cases {
		docs := []string{c.doc}
		if strings.Contains(c.doc, "cluster.x-k8s.io/v1beta2") {
			docs = append(docs, strings.Replace(c.doc, "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1", 1))
		}
		for _, doc := range docs {
			o := memberObject(t, doc)
			t.Run(c.name+" "+o.GetAPIVersion(), func(t *testing.T) {
				if got := ClusterOf(o.GroupVersionKind().GroupKind(), o); got != c.want {
					t.Errorf("ClusterOf = %q, want %q", got, c.want)
				}
				// The label lists select by names the cluster ClusterOf does.
				if l := o.GetLabels()[ClusterLabel(o.GroupVersionKind().GroupKind())]; l != "" && c.want != "" && l != c.want {
					t.Errorf("ClusterLabel names %q, ClusterOf %q", l, c.want)
				}
			})
		}
	}
}

// TestClusterOfTypedObjects: the watch cache's typed objects (with their
// apiVersion and kind cleared, as its decoder leaves them) belong where
// their unstructured form does.
func TestClusterOfTypedObjects(t *testing.T) {
	meta := func(name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels}
	}
	capi := map[string]string{"cluster.x-k8s.io/cluster-name": "other"}
	type cached struct{ AddonObject } // as the cache wraps addons
	cases := []struct {
		name string
		gk   schema.GroupKind
		obj  metav1.Object
	}{
		{"MachineDeployment", gkMachineDeployment, &clusterv1.MachineDeployment{ObjectMeta: meta("md", capi), Spec: clusterv1.MachineDeploymentSpec{ClusterName: "demo"}}},
		{"Machine", gkMachine, &clusterv1.Machine{ObjectMeta: meta("m", capi), Spec: clusterv1.MachineSpec{ClusterName: "demo"}}},
		{"KubeadmControlPlane", gkControlPlane, &controlplanev1.KubeadmControlPlane{ObjectMeta: meta("demo-control-plane", capi)}},
		{"OpenStackCluster", gkInfraCluster, &OpenStackCluster{ObjectMeta: meta("demo", nil)}},
		{"OpenStackServer", gkServer, &OpenStackServer{ObjectMeta: meta("s", map[string]string{"cluster.x-k8s.io/cluster-name": "demo"})}},
		{"addon", gkHelmRelease, &AddonObject{ObjectMeta: meta("a", nil), Spec: AddonSpec{ClusterName: "demo"}}},
		{"addon the cache wraps", gkManifests, &cached{AddonObject{ObjectMeta: meta("a", nil), Spec: AddonSpec{ClusterName: "demo"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ClusterOf(c.gk, c.obj); got != "demo" {
				t.Errorf("ClusterOf = %q, want demo", got)
			}
			raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := ClusterOf(c.gk, &unstructured.Unstructured{Object: raw}); got != "demo" {
				t.Errorf("ClusterOf of the unstructured form = %q, want demo", got)
			}
		})
	}
}

// TestMembershipOwns: the KubeadmControlPlane and OpenStackCluster a
// Cluster refers to are its own, whatever their labels; without a reference
// (or a Cluster), ClusterOf decides. v1beta1 Clusters refer with
// apiVersion, v1beta2 ones with apiGroup.
func TestMembershipOwns(t *testing.T) {
	const (
		v1beta2Refs = `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: demo, namespace: ns}, spec: {
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: cp-by-ref},
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackCluster, name: infra-by-ref}}}`
		v1beta1Refs = `{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: demo, namespace: ns}, spec: {
  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp-by-ref},
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackCluster, name: infra-by-ref}}}`
		noRefs    = `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: demo, namespace: ns}}`
		otherRefs = `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: demo, namespace: ns}, spec: {
  controlPlaneRef: {apiGroup: example.com, kind: OtherControlPlane, name: cp-by-ref}}}`
		refKCP     = `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: cp-by-ref, namespace: ns, labels: {capi.stackhpc.com/cluster: other}}}`
		chartKCP   = `{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: demo-control-plane, namespace: ns}}`
		refInfra   = `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackCluster, metadata: {name: infra-by-ref, namespace: ns}}`
		chartInfra = `{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: OpenStackCluster, metadata: {name: demo, namespace: ns}}`
		machine    = `{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: demo-m, namespace: ns}, spec: {clusterName: demo}}`
	)
	cases := []struct {
		name, cluster, obj string
		want               bool
	}{
		{"v1beta2 control plane reference", v1beta2Refs, refKCP, true},
		{"v1beta2 reference to another control plane", v1beta2Refs, chartKCP, false},
		{"v1beta2 infrastructure reference", v1beta2Refs, refInfra, true},
		{"v1beta2 reference to another infrastructure cluster", v1beta2Refs, chartInfra, false},
		{"v1beta1 control plane reference", v1beta1Refs, refKCP, true},
		{"v1beta1 reference to another control plane", v1beta1Refs, chartKCP, false},
		{"v1beta1 infrastructure reference", v1beta1Refs, refInfra, true},
		{"no references: the chart's names", noRefs, chartKCP, true},
		{"no references: labels decide", noRefs, refKCP, false},
		{"a reference to another kind", otherRefs, chartKCP, true},
		{"no Cluster", "", chartInfra, true},
		{"no Cluster, another name", "", refInfra, false},
		{"references do not decide other kinds", v1beta2Refs, machine, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := picker{stackID: "demo", member: MembershipOf("demo", nil), scheme: conversionScheme(), seen: map[string]string{}}
			if c.cluster != "" {
				p.findCluster([]*unstructured.Unstructured{memberObject(t, c.cluster)})
				if p.snap.Cluster == nil {
					t.Fatalf("Cluster not found: %v", p.errs)
				}
			}
			o := memberObject(t, c.obj)
			if got := p.mine(o, o.GroupVersionKind().GroupKind()); got != c.want {
				t.Errorf("owned = %v, want %v", got, c.want)
			}
		})
	}
}
