#!/usr/bin/env bash
# Builds the tools the tests need from Go modules and caches them outside the
# repository, keyed by version, so each is rebuilt only when missing.
#
#   test/tools/build.sh [kube]   kube-apiserver + etcd; prints the envtest assets directory
#   test/tools/build.sh proto    buf + protoc-gen-go + protoc-gen-go-grpc; prints their directory
#
# The cache is $MAGNUM_CAPI_CACHE, else $XDG_CACHE_HOME/magnum-capi, else ~/.cache/magnum-capi.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${MAGNUM_CAPI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/magnum-capi}

log() { echo "build.sh: $*" >&2; }

# version_of DIR MODULE: the version DIR/go.mod pins for MODULE.
version_of() { (cd "$here/$1" && go list -m -f '{{.Version}}' "$2"); }

# build_once NAME VERSION DIR PKG LDFLAGS: go build into the cache unless the
# binary for that version is there. The build goes to a temporary name and is
# renamed, so an interrupted build never leaves a truncated binary behind.
build_once() {
  local name=$1 version=$2 dir=$3 pkg=$4 ldflags=$5
  local out=$cache/bin/$name-$version
  if [[ ! -x $out ]]; then
    mkdir -p "$cache/bin"
    log "building $name $version (first time only; kube-apiserver takes minutes)"
    local start=$SECONDS
    (cd "$here/$dir" && CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$out.tmp.$$" "$pkg")
    mv "$out.tmp.$$" "$out"
    log "built $name $version in $((SECONDS - start))s"
  fi
  echo "$out"
}

kube() {
  local kv ev minor assets
  kv=$(version_of kube-apiserver k8s.io/kubernetes)
  ev=$(version_of etcd go.etcd.io/etcd/server/v3)
  minor=${kv#v1.}; minor=${minor%%.*}
  assets=$cache/assets/kube-$kv-etcd-$ev
  mkdir -p "$assets"
  # Version ldflags: without them the server reports v0.0.0-master, which
  # kubectl and Helm's KubeVersion check cannot parse.
  ln -sf "$(build_once kube-apiserver "$kv" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver \
    "-s -w -X k8s.io/component-base/version.gitVersion=$kv -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean")" "$assets/kube-apiserver"
  ln -sf "$(build_once etcd "$ev" etcd . "-s -w")" "$assets/etcd"
  # kubectl is only for people poking at `make testbed`; no test needs it.
  if command -v kubectl >/dev/null 2>&1; then ln -sf "$(command -v kubectl)" "$assets/kubectl"; fi
  echo "$assets"
}

proto() {
  local bv gv gg bin
  bv=$(version_of proto github.com/bufbuild/buf)
  gv=$(version_of proto google.golang.org/protobuf)
  gg=$(version_of proto google.golang.org/grpc/cmd/protoc-gen-go-grpc)
  bin=$cache/proto/buf-$bv-go-$gv-grpc-$gg
  mkdir -p "$bin"
  ln -sf "$(build_once buf "$bv" proto github.com/bufbuild/buf/cmd/buf "-s -w")" "$bin/buf"
  ln -sf "$(build_once protoc-gen-go "$gv" proto google.golang.org/protobuf/cmd/protoc-gen-go "-s -w")" "$bin/protoc-gen-go"
  ln -sf "$(build_once protoc-gen-go-grpc "$gg" proto google.golang.org/grpc/cmd/protoc-gen-go-grpc "-s -w")" "$bin/protoc-gen-go-grpc"
  echo "$bin"
}

case ${1:-kube} in
  kube) kube ;;
  proto) proto ;;
  *) echo "usage: $0 [kube|proto]" >&2; exit 2 ;;
esac
