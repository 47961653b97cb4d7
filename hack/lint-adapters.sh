#!/usr/bin/env bash
# Adapters own their types and never import the domain (server/clusters) or
# the gRPC layer (server): the domain depends on them through the small
# interfaces it declares (server/clusters/port_*.go), never the other way.
set -euo pipefail
module=$(go list -m)
forbidden="^${module}/server(/clusters)?\$"
status=0
for pkg in $(go list "$@"); do
  bad=$(go list -deps "$pkg" | grep -E "$forbidden" || true)
  if [[ -n $bad ]]; then
    echo "lint-adapters: the adapter $pkg must not import:" >&2
    echo "$bad" | sed 's/^/  /' >&2
    status=1
  fi
done
exit $status
