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

	"github.com/magnum-capi/magnum-capi/helmvalues"
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
	kcp.Spec.MachineTemplate.ObjectMeta.Labels = map[string]string{"role": "control-plane"}
	kcp.Status.Version, kcp.Status.Selector = "v1.33.2", "cluster.x-k8s.io/cluster-name=demo"
	out, err := trim(kcp)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*controlplanev1.KubeadmControlPlane)
	if !reflect.DeepEqual(got.Spec.KubeadmConfigSpec, bootstrapv1.KubeadmConfigSpec{}) {
		t.Errorf("kubeadm configuration kept: %+v", got.Spec.KubeadmConfigSpec)
	}
	if got.Spec.MachineTemplate.ObjectMeta.Labels != nil || got.Status.Selector != "" {
		t.Errorf("the machines' labels or selector kept: %+v", got)
	}
	if got.Name != "demo-control-plane" || got.Spec.Version != "v1.33.2" || *got.Spec.Replicas != 3 || got.Status.Version != "v1.33.2" {
		t.Errorf("what status reads was lost: %+v", got)
	}

	m := &clusterv1.Machine{}
	m.Name, m.Spec.Version, m.Spec.ProviderID = "demo-worker-1", "v1.33.2", "openstack:///i-1"
	m.OwnerReferences = []metav1.OwnerReference{{Kind: "MachineSet", Name: "demo-worker-abc"}}
	m.UID = "0f1c6c5e-1111-4a5b-9c3d-000000000001"
	m.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "APIServerPodHealthy"}}
	m.Status.NodeInfo = &corev1.NodeSystemInfo{KernelVersion: "6.1", OSImage: "Ubuntu 24.04"}
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "demo-worker-1"}
	m.Status.Addresses = clusterv1.MachineAddresses{{Type: clusterv1.MachineInternalIP, Address: "10.0.0.5"}}
	m.Spec.Bootstrap = clusterv1.Bootstrap{DataSecretName: ptr.To("demo-worker-1-bootstrap")}
	out, err = trim(m)
	if err != nil {
		t.Fatal(err)
	}
	gotM := out.(*clusterv1.Machine)
	if gotM.Status.NodeInfo != nil || gotM.Spec.ReadinessGates != nil || gotM.OwnerReferences != nil || gotM.Spec.Bootstrap.DataSecretName != nil || gotM.UID != "" {
		t.Errorf("node info, readiness gates, owner references, bootstrap reference or UID kept: %+v", gotM)
	}

	md := &clusterv1.MachineDeployment{}
	md.Name, md.Spec.Replicas, md.Spec.Template.Spec.Version = "demo-default-worker", ptr.To[int32](2), "v1.33.2"
	md.Spec.Selector.MatchLabels = map[string]string{clusterv1.ClusterNameLabel: "demo"}
	md.Spec.Template.Labels = map[string]string{clusterv1.ClusterNameLabel: "demo"}
	md.Spec.Template.Spec.Bootstrap.ConfigRef = clusterv1.ContractVersionedObjectReference{Kind: "KubeadmConfigTemplate", Name: "demo-default-worker-1"}
	md.Status.Selector, md.Status.ReadyReplicas = "cluster.x-k8s.io/cluster-name=demo", ptr.To[int32](2)
	out, err = trim(md)
	if err != nil {
		t.Fatal(err)
	}
	gotMD := out.(*clusterv1.MachineDeployment)
	if gotMD.Spec.Selector.MatchLabels != nil || gotMD.Spec.Template.Labels != nil || gotMD.Spec.Template.Spec.Bootstrap.ConfigRef.Name != "" || gotMD.Status.Selector != "" {
		t.Errorf("a MachineDeployment's selectors, machine labels or bootstrap reference kept: %+v", gotMD)
	}
	if gotMD.Name != "demo-default-worker" || *gotMD.Spec.Replicas != 2 || gotMD.Spec.Template.Spec.Version != "v1.33.2" || *gotMD.Status.ReadyReplicas != 2 {
		t.Errorf("what status reads was lost: %+v", gotMD)
	}
	if gotM.Spec.Version != "v1.33.2" || gotM.Spec.ProviderID != "openstack:///i-1" || gotM.Status.NodeRef.Name != "demo-worker-1" || len(gotM.Status.Addresses) != 1 {
		t.Errorf("what status reads was lost: %+v", gotM)
	}

	hr := &HelmRelease{}
	hr.Name, hr.Finalizers = "demo-cni", []string{"addons.stackhpc.com/finalizer"}
	hr.UID = "0f1c6c5e-1111-4a5b-9c3d-000000000002"
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
	if gotHR.Name != "demo-cni" || gotHR.UID == "" || len(gotHR.Finalizers) != 1 || gotHR.Spec.ClusterName != "demo" || gotHR.Status.Phase != "Deployed" {
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

// TestTrimKeepsWhatIsRead: of CAPI objects' labels, annotations and
// conditions, the cache keeps exactly what status and the operations read.
func TestTrimKeepsWhatIsRead(t *testing.T) {
	identity := func(in any) (any, error) { return in, nil }
	trim := trimForStatus(identity, newInterner())
	silent := func(t string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t}
	}
	tests := []struct {
		name                  string
		labels, annotations   map[string]string
		conditions            []metav1.Condition
		v1beta1               clusterv1.Conditions
		wantLabels, wantAnnos map[string]string
		wantTypes, wantV1     []string
	}{{
		name: "labels: index, node group, role; others dropped",
		labels: map[string]string{
			kube.ChartClusterLabel: "demo", clusterv1.ClusterNameLabel: "demo", kube.ChartNodeGroupLabel: "demo-default",
			clusterv1.MachineControlPlaneLabel: "", "helm.sh/chart": "openstack-cluster-0.27.0", "app.kubernetes.io/managed-by": "Helm",
		},
		wantLabels: map[string]string{
			kube.ChartClusterLabel: "demo", clusterv1.ClusterNameLabel: "demo", kube.ChartNodeGroupLabel: "demo-default",
			clusterv1.MachineControlPlaneLabel: "",
		},
	}, {
		name: "annotations: autoscaling bounds, values mode, delete request; Helm's dropped",
		annotations: map[string]string{
			"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1", helmvalues.ValuesAnnotation: "full",
			kube.DeleteRequestedAnnotation: "2026-12-05T10:00:00Z", "meta.helm.sh/release-name": "demo",
		},
		wantAnnos: map[string]string{
			"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1", helmvalues.ValuesAnnotation: "full",
			kube.DeleteRequestedAnnotation: "2026-12-05T10:00:00Z",
		},
	}, {
		name: "conditions: read by type, or with a message, or a v1beta1 error",
		conditions: []metav1.Condition{
			silent(clusterv1.AvailableCondition), silent("Paused"), silent(clusterv1.MachineUpToDateCondition),
			{Type: "BootstrapConfigReady", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "waiting for the control plane"},
		},
		v1beta1: clusterv1.Conditions{
			{Type: clusterv1.ReadyV1Beta1Condition, Status: corev1.ConditionTrue},
			{Type: "DrainingSucceeded", Status: corev1.ConditionTrue},
			{Type: "NetworkReady", Status: corev1.ConditionFalse, Severity: clusterv1.ConditionSeverityError},
		},
		wantTypes: []string{clusterv1.AvailableCondition, clusterv1.MachineUpToDateCondition, "BootstrapConfigReady"},
		wantV1:    []string{string(clusterv1.ReadyV1Beta1Condition), "NetworkReady"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &clusterv1.Machine{}
			m.Labels, m.Annotations, m.Status.Conditions = tt.labels, tt.annotations, tt.conditions
			if tt.v1beta1 != nil {
				m.Status.Deprecated = &clusterv1.MachineDeprecatedStatus{V1Beta1: &clusterv1.MachineV1Beta1DeprecatedStatus{Conditions: tt.v1beta1}}
			}
			out, err := trim(m)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*clusterv1.Machine)
			if len(got.Labels)+len(tt.wantLabels) > 0 && !reflect.DeepEqual(got.Labels, tt.wantLabels) {
				t.Errorf("labels %v, want %v", got.Labels, tt.wantLabels)
			}
			if len(got.Annotations)+len(tt.wantAnnos) > 0 && !reflect.DeepEqual(got.Annotations, tt.wantAnnos) {
				t.Errorf("annotations %v, want %v", got.Annotations, tt.wantAnnos)
			}
			var types, v1 []string
			for _, c := range got.Status.Conditions {
				types = append(types, c.Type)
			}
			if d := got.Status.Deprecated; d != nil && d.V1Beta1 != nil {
				for _, c := range d.V1Beta1.Conditions {
					v1 = append(v1, string(c.Type))
				}
			}
			if !reflect.DeepEqual(types, tt.wantTypes) || !reflect.DeepEqual(v1, tt.wantV1) {
				t.Errorf("conditions %v and v1beta1 %v, want %v and %v", types, v1, tt.wantTypes, tt.wantV1)
			}
		})
	}
}

// TestTrimHelmRecords: of Helm's release Secrets, the labels they are
// selected and indexed by and those newestRevision reads.
func TestTrimHelmRecords(t *testing.T) {
	trim := trimForStatus(func(in any) (any, error) { return in, nil }, newInterner())
	s := helmSecretsObject().(*metav1.PartialObjectMetadata)
	s.Labels = map[string]string{"owner": "helm", "name": "demo", "status": "deployed", "version": "2", "createdAt": "1796479687", "modifiedAt": "1796479690"}
	s.Annotations = map[string]string{"a": "b"}
	out, err := trim(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	want := map[string]string{"owner": "helm", "name": "demo", "status": "deployed", "version": "2", "createdAt": "1796479687"}
	if !reflect.DeepEqual(got.Labels, want) || got.Annotations != nil {
		t.Errorf("labels %v annotations %v, want %v and none", got.Labels, got.Annotations, want)
	}
	if rec := newestRevision([]*metav1.PartialObjectMetadata{got}); !rec.Exists || rec.Revision != 2 || rec.Status != "deployed" || rec.Created.Unix() != 1796479687 {
		t.Errorf("newestRevision of the trimmed record: %+v", rec)
	}
}
