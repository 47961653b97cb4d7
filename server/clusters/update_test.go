package clusters

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/kube"
)

// workerMachine is a Machine of testSpec's default-worker group.
func workerMachine(name string) clusterv1.Machine {
	return clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace,
		Labels: map[string]string{kube.ChartNodeGroupLabel: helmvalues.NodeGroupName(testStackID, "default-worker")}}}
}

// gpuGroup is a worker node group testSpec does not have.
func gpuGroup(status string) helmvalues.NodeGroup {
	return helmvalues.NodeGroup{UUID: "33333333-3333-4333-8333-333333333333", Name: "gpu", Role: "worker", FlavorID: "m1.medium", NodeCount: 1, Status: status}
}

func TestUpdate(t *testing.T) {
	deploy := "deploy " + testNamespace + "/" + testStackID + " " + helmvalues.ChartVersion
	namespace := "ensure namespace " + testNamespace
	gpuServerGroup := helmvalues.NodeGroupServerGroupName(testStackID, helmvalues.NodeGroupName(testStackID, "gpu"))
	tests := []struct {
		name      string
		arrange   func(b *bed, spec *Spec, change *Change)
		wantClass string
		wantIn    string
		want      []string
	}{
		{name: "a resize: the release upgraded",
			arrange:   func(_ *bed, spec *Spec, _ *Change) { spec.NodeGroups[1].NodeCount = 5 },
			wantClass: "OK", want: []string{deploy, namespace}},
		{name: "a shrink naming its machine: marked, then the release upgraded",
			arrange: func(b *bed, spec *Spec, change *Change) {
				b.cache.objs.Machines = []clusterv1.Machine{workerMachine("worker-a"), workerMachine("worker-b")}
				spec.NodeGroups[1].NodeCount = 1
				*change = Change{NodeGroupUUID: spec.NodeGroups[1].UUID, RemoveNodes: []string{"worker-b"}}
			},
			wantClass: "OK", want: []string{"annotate machine " + testNamespace + "/worker-b " + kube.DeleteMachineAnnotation, deploy, namespace}},
		{name: "a shrink of a node group the cluster has not: refused, nothing marked or deployed",
			arrange: func(_ *bed, _ *Spec, change *Change) {
				*change = Change{NodeGroupUUID: "44444444-4444-4444-8444-444444444444", RemoveNodes: []string{"worker-a"}}
			},
			wantClass: "InvalidArgument", wantIn: "nodegroup_uuid", want: []string{namespace}},
		{name: "a shrink naming a machine of another group: refused, nothing marked or deployed",
			arrange: func(b *bed, spec *Spec, change *Change) {
				b.cache.objs.Machines = []clusterv1.Machine{workerMachine("worker-a")}
				*change = Change{NodeGroupUUID: spec.NodeGroups[1].UUID, RemoveNodes: []string{"worker-a", "control-plane-x"}}
			},
			wantClass: "InvalidArgument", wantIn: "nodes_to_remove", want: []string{namespace}},
		{name: "a node group added: its server group made",
			arrange: func(_ *bed, spec *Spec, _ *Change) {
				spec.NodeGroups = append(spec.NodeGroups, gpuGroup("CREATE_IN_PROGRESS"))
			},
			wantClass: "OK", want: []string{"create server group " + gpuServerGroup, deploy, namespace}},
		{name: "a node group being deleted: its server group deleted after the release",
			arrange: func(b *bed, spec *Spec, _ *Change) {
				b.openstack.serverGroups[gpuServerGroup] = madeServerGroup(gpuServerGroup)
				spec.NodeGroups = append(spec.NodeGroups, gpuGroup("DELETE_IN_PROGRESS"))
			},
			wantClass: "OK", want: []string{deploy, "delete server group " + gpuServerGroup, namespace}},
		{name: "Helm fails: the error, the deleted group's server group kept",
			arrange: func(b *bed, spec *Spec, _ *Change) {
				b.openstack.serverGroups[gpuServerGroup] = madeServerGroup(gpuServerGroup)
				spec.NodeGroups = append(spec.NodeGroups, gpuGroup("DELETE_IN_PROGRESS"))
				b.releases.fail = failures{"Deploy": errors.New("rendering the chart: the server is currently unable to handle the request")}
			},
			wantClass: "", wantIn: "unable to handle the request", want: []string{namespace}},
		{name: "an invalid label: refused, nothing written",
			arrange: func(_ *bed, spec *Spec, _ *Change) {
				spec.Cluster.Labels = map[string]string{"auto_healing_enabled": "maybe"}
			},
			wantClass: "InvalidArgument", wantIn: "labels.auto_healing_enabled"},
		{name: "the API server's floating IP changed: refused, nothing written but the namespace",
			arrange: func(_ *bed, spec *Spec, _ *Change) {
				spec.Cluster.Labels = map[string]string{"api_server_floating_ip": "203.0.113.10", "api_server_fixed_ip": "10.0.0.250"}
			},
			wantClass: "InvalidArgument", wantIn: `label api_server_floating_ip: the cluster was created with it unset, and this asks for "203.0.113.10"`,
			want: []string{namespace}},
		{name: "a cluster this driver never created: refused, nothing written",
			arrange:   func(_ *bed, spec *Spec, _ *Change) { spec.Cluster.StackID = "" },
			wantClass: "FailedPrecondition", wantIn: "has no stack_id"},
		{name: "the Lease held by another operation: Aborted, nothing deployed",
			arrange:   func(b *bed, _ *Spec, _ *Change) { b.leaseHeld() },
			wantClass: "Aborted", wantIn: "another operation on this cluster is in progress", want: []string{namespace}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, spec, change := newBed(t), createdSpec(), Change{}
			b.deployed(t, testSpec())
			tt.arrange(b, &spec, &change)
			err := b.s.Update(context.Background(), projectCaller, spec, change)
			assertOutcome(t, err, tt.wantClass, tt.wantIn, b.writes(), tt.want)
		})
	}
}
