// Package e2e drives the sidecar end to end: the real gRPC server on a unix
// socket, over the test stack (real kube-apiserver with CAPI conversion, the
// real Cluster API controllers, a chart repository, a real Keystone), exactly as the Python
// shim calls it. The Python tests (magnum/magnum_capi/tests) add Debian's
// real Magnum on top.
package e2e
