#!/usr/bin/env bash
# Pure packages (helmvalues, capistatus, certs) must not depend on gRPC,
# client-go, controller-runtime or Helm's action code: that keeps them testable
# as plain functions and keeps I/O at the edges.
set -euo pipefail
forbidden='^(google.golang.org/grpc|k8s.io/client-go|sigs.k8s.io/controller-runtime|helm.sh/helm/v3/pkg/action|github.com/gophercloud)'
status=0
for pkg in $(go list "$@" 2>/dev/null); do
  bad=$(go list -deps "$pkg" | grep -E "$forbidden" || true)
  if [[ -n $bad ]]; then
    echo "lint-imports: $pkg must stay pure but depends on:" >&2
    echo "$bad" | sed 's/^/  /' >&2
    status=1
  fi
done
exit $status
