// Package testbed starts a real management cluster for tests: a kube-apiserver
// and etcd built from Go modules (test/tools/build.sh), the Cluster API, CAPO
// and addon-provider CRDs, and Cluster API's own conversion code served as the
// CRDs' conversion webhook, so objects written as v1beta1 (as the
// openstack-cluster chart writes them) are stored as v1beta2 with nothing lost.
//
// It is test-only code; the product never imports it.
package testbed
