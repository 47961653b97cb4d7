package release

import (
	"bytes"
	"maps"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// machineDeploymentV1beta2 is a node group's MachineDeployment in Cluster
// API v1beta2's shape, as a chart on v1beta2 renders it: references by
// apiGroup, rollout and deletion settings where v1beta1 had strategy and
// nodeDrainTimeout. Written for this test.
const machineDeploymentV1beta2 = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  annotations:
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: "3"
    cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size: "0"
  labels:
    capi.stackhpc.com/node-group: gpu
  name: demo-gpu
spec:
  clusterName: demo
  rollout:
    strategy:
      type: RollingUpdate
      rollingUpdate:
        maxSurge: 1
        maxUnavailable: 0
  selector:
    matchLabels:
      capi.stackhpc.com/node-group: gpu
  template:
    metadata:
      labels:
        capi.stackhpc.com/node-group: gpu
    spec:
      clusterName: demo
      version: v1.34.1
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: KubeadmConfigTemplate
          name: demo-gpu-0a1b2c3d
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: OpenStackMachineTemplate
        name: demo-gpu-0a1b2c3d
      deletion:
        nodeDrainTimeoutSeconds: 300
`

// TestDecoratorAPIVersions: a node group's MachineDeployment gets its
// annotations whatever Cluster API version the chart renders it in
// (v1beta1 today, v1beta2 when the chart moves), and nothing but its
// metadata changes; CAPO machine templates of either version get the
// labels alone; a MachineDeployment of another API group gets no
// annotations.
func TestDecoratorAPIVersions(t *testing.T) {
	tests := []struct {
		name           string
		apiVersion     string
		kind           string
		wantAnnotation bool
	}{
		{"CAPI v1beta1", "cluster.x-k8s.io/v1beta1", "MachineDeployment", true},
		{"CAPI v1beta2", "cluster.x-k8s.io/v1beta2", "MachineDeployment", true},
		{"CAPO v1beta1 template", "infrastructure.cluster.x-k8s.io/v1beta1", "OpenStackMachineTemplate", false},
		{"CAPO v1beta2 template", "infrastructure.cluster.x-k8s.io/v1beta2", "OpenStackMachineTemplate", false},
		{"another group", "apps.example.com/v1beta2", "MachineDeployment", false},
	}
	d := decorator{
		labels:             map[string]string{"magnum.openstack.org/cluster-uuid": "c0ffee"},
		machineAnnotations: map[string]map[string]string{"gpu": {"capacity.cluster-autoscaler.kubernetes.io/cpu": "8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decodeOne(t, []byte(machineDeploymentV1beta2))
			in.SetAPIVersion(tt.apiVersion)
			in.SetKind(tt.kind)
			raw, err := in.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			out, err := d.Run(bytes.NewBuffer(raw))
			if err != nil {
				t.Fatal(err)
			}
			got := decodeOne(t, out.Bytes())

			if got.GetLabels()["magnum.openstack.org/cluster-uuid"] != "c0ffee" {
				t.Errorf("labels %v lack the driver's", got.GetLabels())
			}
			wantAnnotations := maps.Clone(in.GetAnnotations())
			if tt.wantAnnotation {
				wantAnnotations["capacity.cluster-autoscaler.kubernetes.io/cpu"] = "8"
			}
			if !reflect.DeepEqual(got.GetAnnotations(), wantAnnotations) {
				t.Errorf("annotations %v, want %v", got.GetAnnotations(), wantAnnotations)
			}
			if !reflect.DeepEqual(got.Object["spec"], in.Object["spec"]) {
				t.Errorf("spec changed:\n got %v\nwant %v", got.Object["spec"], in.Object["spec"])
			}
			if got.GetAPIVersion() != tt.apiVersion {
				t.Errorf("apiVersion %s, want %s", got.GetAPIVersion(), tt.apiVersion)
			}
		})
	}
}

// decodeOne decodes the one object of a YAML or JSON stream.
func decodeOne(t *testing.T, data []byte) *unstructured.Unstructured {
	t.Helper()
	var doc map[string]any
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: doc}
}
