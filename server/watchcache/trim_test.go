package watchcache

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/server/kube"
)

// TestTrimForStatus: the cache keeps what status reads and drops the bulk.
func TestTrimForStatus(t *testing.T) {
	identity := func(in any) (any, error) { return in, nil }
	trim := trimForStatus(identity, newInterner())

	kcp := &controlplanev1.KubeadmControlPlane{}
	kcp.Name = "demo-control-plane"
	kcp.Spec.Version, kcp.Spec.Replicas = "v1.33.2", ptr.To[int32](3)
	kcp.Spec.KubeadmConfigSpec.Files = []bootstrapv1.File{{Path: "/etc/big", Content: "lots of bytes"}}
	kcp.Spec.KubeadmConfigSpec.PreKubeadmCommands = []string{"echo hi"}
	kcp.Status.Version = "v1.33.2"
	out, err := trim(kcp)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*controlplanev1.KubeadmControlPlane)
	if !reflect.DeepEqual(got.Spec.KubeadmConfigSpec, bootstrapv1.KubeadmConfigSpec{}) {
		t.Errorf("kubeadm configuration kept: %+v", got.Spec.KubeadmConfigSpec)
	}
	if got.Name != "demo-control-plane" || got.Spec.Version != "v1.33.2" || *got.Spec.Replicas != 3 || got.Status.Version != "v1.33.2" {
		t.Errorf("what status reads was lost: %+v", got)
	}

	m := &clusterv1.Machine{}
	m.Name, m.Spec.Version, m.Spec.ProviderID = "demo-worker-1", "v1.33.2", "openstack:///i-1"
	m.OwnerReferences = []metav1.OwnerReference{{Kind: "MachineSet", Name: "demo-worker-abc"}}
	m.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "APIServerPodHealthy"}}
	m.Status.NodeInfo = &corev1.NodeSystemInfo{KernelVersion: "6.1", OSImage: "Ubuntu 24.04"}
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "demo-worker-1"}
	m.Status.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.5"}}
	out, err = trim(m)
	if err != nil {
		t.Fatal(err)
	}
	gotM := out.(*clusterv1.Machine)
	if gotM.Status.NodeInfo != nil || gotM.Spec.ReadinessGates != nil || gotM.OwnerReferences != nil {
		t.Errorf("node info, readiness gates or owner references kept: %+v", gotM)
	}
	if gotM.Spec.Version != "v1.33.2" || gotM.Spec.ProviderID != "openstack:///i-1" || gotM.Status.NodeRef.Name != "demo-worker-1" || len(gotM.Status.Addresses) != 1 {
		t.Errorf("what status reads was lost: %+v", gotM)
	}

	hr := &HelmRelease{}
	hr.Name, hr.Finalizers = "demo-cni", []string{"addons.stackhpc.com/finalizer"}
	hr.Labels = map[string]string{kube.ChartClusterLabel: "demo", "helm.sh/chart": "openstack-cluster-0.27.0"}
	hr.Annotations = map[string]string{"meta.helm.sh/release-name": "demo"}
	hr.Spec.ClusterName, hr.Status.Phase = "demo", "Deployed"
	out, err = trim(hr)
	if err != nil {
		t.Fatal(err)
	}
	gotHR := out.(*HelmRelease)
	if !reflect.DeepEqual(gotHR.Labels, map[string]string{kube.ChartClusterLabel: "demo"}) || gotHR.Annotations != nil {
		t.Errorf("an addon keeps labels %v and annotations %v, want only the chart's cluster label", gotHR.Labels, gotHR.Annotations)
	}
	if gotHR.Name != "demo-cni" || len(gotHR.Finalizers) != 1 || gotHR.Spec.ClusterName != "demo" || gotHR.Status.Phase != "Deployed" {
		t.Errorf("what status reads was lost: %+v", gotHR)
	}

	srv := &OpenStackServer{}
	srv.Name, srv.Status.Ready = "demo-worker-1", true
	srv.Labels = map[string]string{clusterv1.ClusterNameLabel: "demo", "other": "x"}
	srv.Annotations = map[string]string{"a": "b"}
	out, err = trim(srv)
	if err != nil {
		t.Fatal(err)
	}
	gotSrv := out.(*OpenStackServer)
	if !reflect.DeepEqual(gotSrv.Labels, map[string]string{clusterv1.ClusterNameLabel: "demo"}) || gotSrv.Annotations != nil {
		t.Errorf("a server keeps labels %v and annotations %v, want only CAPI's cluster label (its index)", gotSrv.Labels, gotSrv.Annotations)
	}
	if gotSrv.Name != "demo-worker-1" || !gotSrv.Status.Ready {
		t.Errorf("what status reads was lost: %+v", gotSrv)
	}
}
