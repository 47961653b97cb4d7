#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo use, when any is missing.
# Python always runs as /usr/bin/python3: Debian's magnum is not importable
# from other interpreters.
set -euo pipefail
packages=(
  python3-magnum python3-grpcio python3-protobuf   # the shim's runtime, Magnum 15 (Zed)
  python3-oslotest python3-testscenarios           # Magnum's own test base needs these
  python3-pytest python3-setuptools
  protobuf-compiler protobuf-compiler-grpc         # protoc + grpc_python_plugin for the Python stubs
  python3-keystone uwsgi-core uwsgi-plugin-python3 # a real Keystone for credential tests
  sqlite3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps.sh: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
