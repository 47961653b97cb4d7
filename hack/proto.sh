#!/usr/bin/env bash
# Lints proto/ and generates its Go and Python code.
#
#   hack/proto.sh TOOLS lint            buf lint (buf.yaml), the protovalidate rules included
#   hack/proto.sh TOOLS generate [OUT]  buf generate (buf.gen.yaml) into OUT (default: the repository),
#                                       and the Python of buf/validate/validate.proto beside the shim's
#
# TOOLS is test/tools/build.sh proto's directory. proto/ imports
# buf/validate/validate.proto for its request rules, and the Buf Schema
# Registry that would serve it is not a dependency of the build:
# test/tools/proto/validatedesc writes its descriptor from the Go package
# protovalidate-go checks with, protoc compiles proto/ against it
# (--descriptor_set_in), and buf works on that image (--path magnumcapi:
# proto/'s own files).
set -euo pipefail
tools=$1 cmd=$2
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$root/test/tools/proto" && go run ./validatedesc) >"$scratch/validate.binpb"
mapfile -t files < <(cd "$root/proto" && find . -name '*.proto' -printf '%P\n' | sort)
protoc --descriptor_set_in="$scratch/validate.binpb" --proto_path="$root/proto" \
  --include_imports --include_source_info --descriptor_set_out="$scratch/image.binpb" "${files[@]}"
export PATH="$tools:$PATH"
case $cmd in
  lint)
    buf lint "$scratch/image.binpb" --path magnumcapi --config "$root/buf.yaml" ;;
  generate)
    cd "${3:-$root}"
    buf generate "$scratch/image.binpb" --path magnumcapi --template "$root/buf.gen.yaml"
    protoc --descriptor_set_in="$scratch/validate.binpb" --python_out=magnum --pyi_out=magnum buf/validate/validate.proto ;;
  *) echo "usage: $0 TOOLS lint|generate [OUT]" >&2; exit 2 ;;
esac
