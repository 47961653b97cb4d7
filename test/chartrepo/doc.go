// Package chartrepo runs Helm chart repositories on 127.0.0.1 inside a test:
// a classic HTTP repository (index.yaml and .tgz, optionally over TLS with
// basic auth) and an OCI registry. Both are built from chart directories
// packaged at chosen versions, count the requests they get, and can be taken
// offline and brought back on the same address, so tests can see what a
// client fetches and how it copes with a repository that is down.
//
// It is test-only code; the product never imports it.
package chartrepo
