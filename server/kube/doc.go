// Package kube is the sidecar's access to a management cluster: the API
// client, server-side apply of the Secrets and Namespaces the driver owns,
// per-cluster Leases that serialize operations across sidecar replicas and
// a Helm REST client getter. The watch cache status is answered from is
// package watchcache.
package kube
