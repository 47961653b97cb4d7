#!/usr/bin/env bash
# Regenerates the proto code into a scratch directory and fails if the
# committed Go or Python stubs differ: generated code must match proto/.
set -euo pipefail
tools=$1
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/proto" "$scratch/magnum"
"$root/hack/proto.sh" "$tools" generate "$scratch"
status=0
while IFS= read -r -d '' f; do
  rel=${f#"$scratch"/}
  if ! cmp -s "$f" "$root/$rel"; then
    echo "verify-generated: $rel is stale; run \`make generate\`" >&2
    status=1
  fi
done < <(find "$scratch/proto" "$scratch/magnum" -type f \( -name '*.pb.go' -o -name '*_pb2*.py' -o -name '*.pyi' \) -print0)
exit $status
