// Package certs turns the CA material Magnum generated for a cluster into the
// Secrets Cluster API expects to find before it creates the control plane:
// <stack_id>-ca (cluster CA), -etcd (etcd CA), -proxy (front-proxy CA) and -sa
// (service-account signing key pair). When they exist, CAPI's kubeadm control
// plane uses them instead of generating its own, so `openstack coe cluster
// config`, which signs a client certificate with Magnum's stored CA and never
// asks the driver, yields a kubeconfig the cluster trusts.
//
// The package is pure: it parses and checks PEM and builds Secret objects. The
// sidecar applies them (server-side apply, field manager "magnum").
package certs
