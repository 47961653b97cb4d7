package capistatus

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// objects parses YAML documents (separated by "---") into unstructured
// objects, as a watch cache or `kubectl get -o yaml` would hand them over.
func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range docs {
		for _, part := range strings.Split(doc, "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(part), &m); err != nil {
				t.Fatalf("fixture: %v", err)
			}
			if m != nil {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out
}

const (
	yCluster = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: demo-k7qzbfr2xwa4, namespace: magnum-p1, generation: 2, resourceVersion: "101", labels: {capi.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
spec:
  controlPlaneEndpoint: {host: 203.0.113.10, port: 6443}
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: demo-k7qzbfr2xwa4-control-plane}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: OpenStackCluster, name: demo-k7qzbfr2xwa4}
status:
  observedGeneration: 2
  phase: Provisioned
  conditions:
  - {type: Available, status: "True", reason: Available, lastTransitionTime: "2026-07-01T11:00:00Z"}
`
	yInfra = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackCluster
metadata: {name: demo-k7qzbfr2xwa4, namespace: magnum-p1, generation: 1, resourceVersion: "102", finalizers: [openstackcluster.infrastructure.cluster.x-k8s.io]}
spec:
  controlPlaneEndpoint: {host: 203.0.113.10, port: 6443}
  identityRef: {cloudName: openstack, name: demo-k7qzbfr2xwa4-cloud-credentials}
status:
  ready: true
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-07-01T10:50:00Z"}
`
	yKCP = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: demo-k7qzbfr2xwa4-control-plane, namespace: magnum-p1, generation: 1, resourceVersion: "103"}
spec: {replicas: 3, version: v1.33.2}
status: {observedGeneration: 1, replicas: 3, readyReplicas: 3, upToDateReplicas: 3, availableReplicas: 3, version: v1.33.2}
`
	yMD = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: demo-k7qzbfr2xwa4-default-worker, namespace: magnum-p1, generation: 1, resourceVersion: "104", labels: {capi.stackhpc.com/node-group: default-worker}}
spec: {clusterName: demo-k7qzbfr2xwa4, replicas: 2}
status: {observedGeneration: 1, replicas: 2}
`
	yMachines = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: demo-k7qzbfr2xwa4-default-worker-zz, namespace: magnum-p1, resourceVersion: "105", labels: {cluster.x-k8s.io/cluster-name: demo-k7qzbfr2xwa4, capi.stackhpc.com/node-group: default-worker}}
spec: {clusterName: demo-k7qzbfr2xwa4}
status: {addresses: [{type: InternalIP, address: 10.0.0.22}]}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: demo-k7qzbfr2xwa4-default-worker-aa, namespace: magnum-p1, resourceVersion: "106", labels: {capi.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
spec: {clusterName: demo-k7qzbfr2xwa4}
`
	yAddons = `
apiVersion: addons.stackhpc.com/v1alpha1
kind: HelmRelease
metadata: {name: demo-k7qzbfr2xwa4-cni-calico, namespace: magnum-p1, resourceVersion: "107", labels: {capi.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
spec: {clusterName: demo-k7qzbfr2xwa4, bootstrap: true, targetNamespace: tigera-operator}
status: {phase: Deployed, revision: 1}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: Manifests
metadata: {name: demo-k7qzbfr2xwa4-cloud-config, namespace: magnum-p1, resourceVersion: "108", labels: {addons.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
spec: {clusterName: demo-k7qzbfr2xwa4, targetNamespace: openstack-system}
`
	// Another cluster of the same project, and kinds status derivation ignores.
	yOthers = `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: other-aaaaaaaaaaaa, namespace: magnum-p1}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: other-aaaaaaaaaaaa-default-worker, namespace: magnum-p1, labels: {capi.stackhpc.com/cluster: other-aaaaaaaaaaaa}}
spec: {clusterName: other-aaaaaaaaaaaa, replicas: "not even valid"}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: other-aaaaaaaaaaaa-default-worker-x, namespace: magnum-p1}
spec: {clusterName: other-aaaaaaaaaaaa}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: HelmRelease
metadata: {name: other-aaaaaaaaaaaa-cni-calico, namespace: magnum-p1}
spec: {clusterName: other-aaaaaaaaaaaa}
---
apiVersion: v1
kind: Secret
metadata: {name: demo-k7qzbfr2xwa4-cloud-credentials, namespace: magnum-p1, labels: {capi.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: demo-k7qzbfr2xwa4-default-worker-d43bd1bb, namespace: magnum-p1, labels: {capi.stackhpc.com/cluster: demo-k7qzbfr2xwa4}}
`
)

const demo = "demo-k7qzbfr2xwa4"

// snapshotCase is one row about reading objects.
type snapshotCase struct {
	row, name string
	docs      []string
	wantErr   []string // substrings of the error; none: no error
	check     func(*testing.T, Snapshot)
}

var snapshotCases = []snapshotCase{
	{row: "O-01", name: "this cluster's objects only, sorted", docs: []string{yOthers, yAddons, yMachines, yMD, yKCP, yInfra, yCluster},
		check: func(t *testing.T, s Snapshot) {
			if s.Cluster == nil || s.InfraCluster == nil || s.ControlPlane == nil {
				t.Fatalf("missing objects: %+v", s)
			}
			if s.Cluster.Spec.ControlPlaneEndpoint.Host != "203.0.113.10" || !s.InfraCluster.Status.Ready || *s.ControlPlane.Spec.Replicas != 3 {
				t.Errorf("fields not converted: %+v %+v", s.Cluster.Spec, s.InfraCluster.Status)
			}
			if len(s.MachineDeployments) != 1 || len(s.Machines) != 2 || len(s.Addons) != 2 {
				t.Fatalf("got %d MachineDeployments, %d Machines, %d addons; want 1, 2, 2", len(s.MachineDeployments), len(s.Machines), len(s.Addons))
			}
			if s.Machines[0].Name != demo+"-default-worker-aa" || s.Addons[0].Kind != "HelmRelease" || s.Addons[1].Phase != "" {
				t.Errorf("order or content: %s, %+v", s.Machines[0].Name, s.Addons)
			}
		}},
	{row: "O-02", name: "other namespace ignored", docs: []string{yCluster, strings.ReplaceAll(yMD, "magnum-p1", "magnum-p2")},
		check: func(t *testing.T, s Snapshot) {
			if len(s.MachineDeployments) != 0 {
				t.Errorf("MachineDeployment of another namespace picked: %+v", s.MachineDeployments)
			}
		}},
	{row: "O-03", name: "v1beta1 converted", docs: []string{`
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: demo-k7qzbfr2xwa4, namespace: magnum-p1}
spec:
  controlPlaneEndpoint: {host: 203.0.113.10, port: 6443}
  controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: cp-by-ref}
status:
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-07-01T11:00:00Z"}
  v1beta2:
    conditions:
    - {type: Available, status: "True", reason: Available, lastTransitionTime: "2026-07-01T11:00:00Z"}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata: {name: cp-by-ref, namespace: magnum-p1}
spec: {replicas: 1, version: v1.33.2}
status: {replicas: 1, updatedReplicas: 1, readyReplicas: 1, version: v1.33.2}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: demo-k7qzbfr2xwa4-default-worker, namespace: magnum-p1}
spec: {clusterName: demo-k7qzbfr2xwa4, replicas: 2, selector: {}, template: {spec: {clusterName: demo-k7qzbfr2xwa4, bootstrap: {}, infrastructureRef: {}}}}
status: {phase: Running, replicas: 2, readyReplicas: 2}
`},
		check: func(t *testing.T, s Snapshot) {
			if s.Cluster == nil || !findV2(s.Cluster.Status.Conditions, "Available").isTrue() || !findV1(clusterV1(s.Cluster), "Ready").isTrue() {
				t.Fatalf("Cluster conditions not converted: %+v", s.Cluster)
			}
			if s.ControlPlane == nil || s.ControlPlane.Name != "cp-by-ref" || s.ControlPlane.Status.Deprecated == nil || s.ControlPlane.Status.Deprecated.V1Beta1.UpdatedReplicas != 1 {
				t.Errorf("KubeadmControlPlane (found by controlPlaneRef) not converted: %+v", s.ControlPlane)
			}
			if len(s.MachineDeployments) != 1 || s.MachineDeployments[0].Status.Phase != "Running" {
				t.Errorf("MachineDeployment not converted: %+v", s.MachineDeployments)
			}
		}},
	{row: "O-04", name: "field of the wrong type", docs: []string{yCluster, strings.Replace(yMD, "replicas: 2}", "replicas: three}", 1)},
		wantErr: []string{"MachineDeployment magnum-p1/demo-k7qzbfr2xwa4-default-worker: spec.replicas: got a JSON string, expected an integer"}},
	{row: "O-04", name: "every invalid object reported", docs: []string{strings.Replace(yCluster, "port: 6443", "port: [1]", 1), strings.Replace(yAddons, "phase: Deployed", "phase: {a: b}", 1)},
		wantErr: []string{"Cluster magnum-p1/demo-k7qzbfr2xwa4: spec.controlPlaneEndpoint.port: got a JSON array, expected an integer", "HelmRelease magnum-p1/demo-k7qzbfr2xwa4-cni-calico: status.phase: got a JSON object, expected a string"}},
	{row: "O-05", name: "unsupported CAPI version", docs: []string{strings.Replace(yCluster, "v1beta2", "v1alpha4", 1)},
		wantErr: []string{`Cluster magnum-p1/demo-k7qzbfr2xwa4: apiVersion "cluster.x-k8s.io/v1alpha4" is not supported, expected cluster.x-k8s.io/v1beta2 (or v1beta1)`}},
	{row: "O-05", name: "unsupported CAPO version", docs: []string{strings.Replace(yInfra, "v1beta1", "v1alpha7", 1)},
		wantErr: []string{`OpenStackCluster magnum-p1/demo-k7qzbfr2xwa4: apiVersion "infrastructure.cluster.x-k8s.io/v1alpha7" is not supported`}},
	{row: "O-06", name: "identical copy kept once", docs: []string{yCluster, yMD, yMD},
		check: func(t *testing.T, s Snapshot) {
			if len(s.MachineDeployments) != 1 {
				t.Errorf("got %d MachineDeployments, want 1", len(s.MachineDeployments))
			}
		}},
	{row: "O-06", name: "two versions of one object", docs: []string{yCluster, yMD, strings.Replace(yMD, `"104"`, `"999"`, 1)},
		wantErr: []string{`MachineDeployment magnum-p1/demo-k7qzbfr2xwa4-default-worker: appears twice with different content (resourceVersion "104" and "999")`}},
	{row: "O-06", name: "two namespaces without a Cluster", docs: []string{yInfra, strings.ReplaceAll(yInfra, "magnum-p1", "magnum-p2")},
		wantErr: []string{"OpenStackCluster magnum-p2/demo-k7qzbfr2xwa4: found in more than one namespace"}},
	{row: "O-07", name: "negative replicas", docs: []string{yCluster, strings.Replace(yKCP, "readyReplicas: 3", "readyReplicas: -1", 1)},
		wantErr: []string{"KubeadmControlPlane magnum-p1/demo-k7qzbfr2xwa4-control-plane: status.readyReplicas: -1, expected 0 or more"}},
	{row: "O-08", name: "failed addon's time from managedFields", docs: []string{`
apiVersion: addons.stackhpc.com/v1alpha1
kind: HelmRelease
metadata:
  name: demo-k7qzbfr2xwa4-csi-cinder
  namespace: magnum-p1
  labels: {addons.stackhpc.com/cluster: demo-k7qzbfr2xwa4}
  managedFields:
  - {manager: helm, operation: Update, time: "2026-07-01T10:00:00Z", fieldsType: FieldsV1, fieldsV1: {}}
  - {manager: kopf, operation: Update, subresource: status, time: "2026-07-01T11:40:00Z", fieldsType: FieldsV1, fieldsV1: {}}
  - {manager: kopf, operation: Update, subresource: status, time: "2026-07-01T11:20:00Z", fieldsType: FieldsV1, fieldsV1: {}}
spec: {clusterName: demo-k7qzbfr2xwa4}
status: {phase: Failed, failureMessage: "chart not found"}
`},
		check: func(t *testing.T, s Snapshot) {
			want := time.Date(2026, 7, 1, 11, 40, 0, 0, time.UTC)
			if len(s.Addons) != 1 || !s.Addons[0].FailedSince.Equal(want) || s.Addons[0].FailureMessage != "chart not found" {
				t.Errorf("addons = %+v, want FailedSince %v", s.Addons, want)
			}
		}},
}

func TestSnapshotFromObjects(t *testing.T) {
	for _, c := range snapshotCases {
		t.Run(c.row+" "+c.name, func(t *testing.T) {
			snap, err := SnapshotFromObjects(demo, objects(t, c.docs...))
			if len(c.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				c.check(t, snap)
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", c.wantErr)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var inv interface{ InvalidArgument() bool }
			if !errors.As(err, &inv) || !inv.InvalidArgument() {
				t.Errorf("error %v does not answer InvalidArgument", err)
			}
		})
	}
}

func TestSnapshotFromObjectsNeedsStackID(t *testing.T) {
	_, err := SnapshotFromObjects("", nil)
	var inv interface{ InvalidArgument() bool }
	if err == nil || !errors.As(err, &inv) {
		t.Fatalf("err = %v, want an InvalidArgument error", err)
	}
}
