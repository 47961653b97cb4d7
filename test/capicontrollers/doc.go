// Package capicontrollers runs the real Cluster API controllers for the test
// bed: core (Cluster, MachineDeployment, MachineSet, Machine,
// MachineHealthCheck), the kubeadm control plane and the kubeadm bootstrap
// provider, with their admission webhooks, in one controller-runtime
// manager against the test bed's kube-apiserver, on the Cluster API line the
// openstack-cluster chart 0.27.0 is tested with (v1.13).
//
// Workload clusters come from Cluster API's own in-memory runtime
// (sigs.k8s.io/cluster-api/test/infrastructure/inmemory): each cluster gets
// an in-memory API server and etcd members listening on 127.0.0.1, which
// KubeadmControlPlane, the Machine controller and MachineHealthCheck really
// talk to (nodes, static pods, etcd membership, certificates).
//
// Only two things here are our own code:
//
//   - an OpenStack infrastructure provider for the CAPO v1beta1 kinds the
//     chart renders (OpenStackCluster; OpenStackMachine cloned from an
//     OpenStackMachineTemplate, with its OpenStackServer), which "boots"
//     servers into the in-memory runtime, with fault injection (fault.go);
//   - a stand-in for the azimuth cluster-api-addon-provider (HelmRelease,
//     Manifests), which is Python upstream.
//
// The test bed runs no kube-controller-manager, so a small garbage
// collector (gc.go) deletes what owner references would have.
//
// This is a separate Go module: Cluster API v1.13's in-memory etcd server
// implements etcd 3.6's gRPC interfaces, while the driver's module is held
// at etcd 3.7 by k8s.io/apiserver 0.37 (through Helm 3.22), and v1.13's
// v1beta1 API types import controller-runtime, which the driver's pure
// packages must not. The test bed runs it as a process
// (cmd/capi-controllers); nothing in the product imports it.
package capicontrollers
