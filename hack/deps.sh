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
  # Magnum as a cloud runs it (test/magnum): Debian 12's Magnum 15 services
  # (python3-magnum's magnum-api/-conductor, magnum-common's api-paste.ini),
  # MariaDB's server binaries without the system service mariadb-server
  # enables, RabbitMQ, the openstack CLI with the coe commands, debootstrap
  # for the Debian trixie (Magnum 20) and sid (Magnum 23) root file systems,
  # and pip/wheel for the shim's wheel as the operator guide builds it.
  magnum-common python3-pymysql mariadb-server-core mariadb-client-core rabbitmq-server
  python3-openstackclient python3-magnumclient debootstrap python3-pip python3-wheel
  # The sidecar image built from deploy/Dockerfile's final stage without a
  # registry (deploy/image_test.go), and systemd's tools for the unit.
  buildah podman systemd-container
  # Kolla-Ansible's templates rendered by Ansible's own template module.
  ansible-core
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps.sh: installing ${missing[*]}" >&2
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  # Other runs may be installing too: wait for dpkg's lock.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
