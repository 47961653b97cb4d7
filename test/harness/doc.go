// Package harness composes the whole test stack a driver test needs: the
// test bed (real kube-apiserver + etcd, CAPI CRDs and conversion), the real
// Cluster API controllers with in-memory workload clusters (test/realcapi),
// an HTTP chart repository serving our test openstack-cluster chart, a real
// Keystone with a project, a user and the sidecar's service identity, and
// the recorded-JSON doubles of Glance, Neutron, Cinder and Nova registered
// in Keystone's catalog. Go end-to-end tests use it in process; `make
// testbed`, the Python tests and `make demo` run it as a process
// (test/cmd/testbed) and read its Info.
package harness
