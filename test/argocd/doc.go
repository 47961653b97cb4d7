// Package argocd reads the Argo CD cluster Secret the sidecar's GitOps
// hand-off writes (server/clusters/testdata/argocd-cluster-secret.json,
// kept by TestArgoCDSecretGolden from the code that builds it) with Argo
// CD's own code for cluster Secrets: util/db.SecretToCluster, what Argo CD's
// controllers and its ApplicationSet cluster generator use, and the
// Cluster's RESTConfig, what Argo CD connects with.
//
// This is a Go module of its own, a test-only dependency: Argo CD v2.14
// pins Kubernetes 0.31 and a large graph (git, OIDC, Redis clients) that
// must stay out of the driver's module, which is on Kubernetes 0.37. Argo CD
// v3.5 cannot be used: its gitops-engine pseudo-version is not on the Go
// module proxy, and v3.6 requires Go 1.27. The v1 cluster Secret format is
// the same in v2 and v3.
package argocd
