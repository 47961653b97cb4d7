#!/usr/bin/env bash
# Import rules between layers; make verify runs both.
#
#   hack/lint-imports.sh pure PACKAGES...      pure packages (helmvalues,
#     capistatus, certs) must not depend on gRPC, client-go,
#     controller-runtime, Helm's action code or gophercloud: that keeps them
#     testable as plain functions and keeps I/O at the edges.
#   hack/lint-imports.sh adapters PACKAGES...  adapters own their types and
#     never import the domain (server/clusters) or the gRPC layer (server):
#     the domain depends on them through the small interfaces it declares
#     (server/clusters/port_*.go), never the other way.
#   hack/lint-imports.sh leaf PACKAGES...      leaves (server/panics) every
#     layer imports must import no package of the sidecar: the domain and
#     every adapter can then use them without a cycle or a layer breach.
set -euo pipefail
case ${1:-} in
pure)
  forbidden='^(google.golang.org/grpc|k8s.io/client-go|sigs.k8s.io/controller-runtime|helm.sh/helm/v3/pkg/action|github.com/gophercloud)'
  rule="must stay pure but depends on" ;;
adapters)
  forbidden="^$(go list -m)/server(/clusters)?\$"
  rule="is an adapter but imports" ;;
leaf)
  forbidden="^$(go list -m)/"
  rule="is a leaf but imports" ;;
*)
  echo "usage: $0 pure|adapters|leaf PACKAGES..." >&2
  exit 2 ;;
esac
shift
status=0
pkgs=$(go list "$@") # fails the check if go list does (e.g. an import cycle)
for pkg in $pkgs; do
  deps=$(go list -deps "$pkg" | grep -vxF "$pkg" || true)
  bad=$(grep -E "$forbidden" <<<"$deps" || true)
  if [[ -n $bad ]]; then
    echo "lint-imports: $pkg $rule:" >&2
    echo "$bad" | sed 's/^/  /' >&2
    status=1
  fi
done
exit $status
